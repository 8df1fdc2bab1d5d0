"""kill -9 of the uploader mid-transfer, then a rerun: only what is missing goes up."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.checkpoint.conftest import MiB, upload_args, write_checkpoint
from tests.conftest import ROOT

PREFIX = "models/resume"
MANIFEST = f"{PREFIX}/.hyperpod-dpd-manifest.json"


@pytest.mark.long
def test_rerun_after_kill_9_uploads_only_what_is_missing(s3, s3_client, bucket, tmp_path, run_cli):
    sizes = {f"shard-{i:02d}.bin": 128 * 1024 for i in range(40)}
    sizes["model-big.safetensors"] = 6 * MiB
    src = tmp_path / "ckpt"
    contents = write_checkpoint(src, sizes, seed=3)
    log = tmp_path / "uploader.log"
    cmd = [
        sys.executable,
        "-m",
        "checkpoint",
        *upload_args(src, f"s3://{bucket}/{PREFIX}", s3),
        "--transfer-client",
        "classic",
        "--max-bandwidth",
        "4MiB",  # ~3 s for the whole set: time to kill it halfway
        "--concurrency",
        "2",
        "--part-size",
        "5MiB",
        "--progress",
        "plain",
        "--progress-interval",
        "0.5",
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and proc.poll() is None:
                landed = [
                    r
                    for r in s3.recorder.since(0, bucket)
                    if r.op == "PutObject" and r.status == 200 and r.key != MANIFEST
                ]
                if len(landed) >= 10:
                    break
                time.sleep(0.02)
            proc.send_signal(signal.SIGKILL)
        finally:
            proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, f"the uploader ended by itself:\n{log.read_text()}"

    listed = s3_client.list_objects_v2(Bucket=bucket, Prefix=f"{PREFIX}/").get("Contents", [])
    landed_keys = {o["Key"] for o in listed}
    assert MANIFEST not in landed_keys  # interrupted: no manifest, so no reader uses it
    assert 10 <= len(landed_keys) < len(sizes)

    mark = s3.recorder.mark()
    code, out, err = run_cli(
        *upload_args(
            src, f"s3://{bucket}/{PREFIX}", s3, "--part-size", "5MiB", "--progress", "none"
        )
    )
    assert code == 0, err
    written = {w.key for w in s3.recorder.writes(mark, bucket)}
    every = {f"{PREFIX}/{p}" for p in sizes}
    assert written == (every - landed_keys) | {MANIFEST}
    assert f"kept {len(landed_keys)} verified" in out
    assert s3_client.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []
    for path, data in contents.items():
        body = s3_client.get_object(Bucket=bucket, Key=f"{PREFIX}/{path}")["Body"].read()
        assert body == data
    code, _, err = run_cli(
        "verify", "--dest", f"s3://{bucket}/{PREFIX}", "--endpoint-url", s3.endpoint
    )
    assert code == 0, err
