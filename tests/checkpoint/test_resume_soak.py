"""Soak: `checkpoint upload` killed with SIGKILL at seeded random points (mid-part included,
sometimes twice in a row), then resumed: every resume ends with exit 0, `checkpoint verify` with
exit 0, and no file complete before a kill, nor a part S3 listed for it, is sent again.

"Sent again" is judged by who sent it, not by when the server got it: each uploader's requests
carry an app id of their own in their User-Agent (AWS_SDK_UA_APP_ID), and the recording server
keeps it. A request the killed process had already sent can reach the server, or be handled by
it, after the kill and the listing (on a busy machine the server's thread for it may not run
for seconds): it was not sent again by a resume, whenever it lands."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field

import pytest

from tests.checkpoint.conftest import MiB, upload_args, write_checkpoint
from tests.conftest import ROOT

SEED = 2026
KILLS = 20  # at least, in all
TWICE = 3  # rounds killed twice in a row before their resume, at least
MAX_ROUNDS = 30
SIZES = {
    "config.json": 900,
    "tokenizer.json": 60_000,
    "model.safetensors.index.json": 3_000,
    "model-00001-of-00002.safetensors": 11 * MiB + 17,  # 3 parts of 5 MiB
    "model-00002-of-00002.safetensors": 10 * MiB + 5,  # 3 parts
}
FLAGS = ("--part-size", "5MiB", "--concurrency", "2", "--progress", "none")


@dataclass
class Kill:
    """What S3 held right after a kill: complete objects, and the parts of incomplete uploads."""

    mark: int
    complete: set[str]
    parts: dict[str, set[int]] = field(default_factory=dict)
    app: str = ""  # the killed process's app id (its requests' User-Agent)
    listed: dict[str, list] = field(default_factory=dict)  # what the listing said, for a failure


def snapshot(s3, s3_client, bucket: str, prefix: str) -> Kill:
    """S3 as the resume finds it, then the mark its writes are counted from. Listing first: a
    request of the killed process that the server was still handling lands before the mark
    (on a busy machine it can land during the listing), so it is never taken for a resend."""
    listed = s3_client.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])
    complete = {o["Key"] for o in listed}
    parts: dict[str, set[int]] = {}
    shown: dict[str, list] = {}
    uploads = s3_client.list_multipart_uploads(Bucket=bucket, Prefix=prefix).get("Uploads", [])
    for upload in uploads:
        try:
            listed_parts = s3_client.list_parts(
                Bucket=bucket, Key=upload["Key"], UploadId=upload["UploadId"]
            ).get("Parts", [])
        except s3_client.exceptions.NoSuchUpload:
            continue  # completed or aborted meanwhile
        parts.setdefault(upload["Key"], set()).update(p["PartNumber"] for p in listed_parts)
        shown.setdefault(upload["Key"], []).append(
            (upload["UploadId"][:8], upload["Initiated"].isoformat(),
             [(p["PartNumber"], p["Size"], p.get("ChecksumCRC64NVME")) for p in listed_parts])
        )  # fmt: skip
    return Kill(s3.recorder.mark(), complete, parts, listed=shown)


def start(cmd, env, log, app: str):
    """The uploader as a process of its own, its requests marked `app/<app>` in their
    User-Agent (AWS_SDK_UA_APP_ID, which botocore adds to every request)."""
    env = {**env, "AWS_SDK_UA_APP_ID": app}
    with log.open("a") as out:
        return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)


def kill_after(proc, s3, bucket: str, writes: int, extra: float) -> bool:
    """SIGKILL `proc` `extra` seconds after S3 answered its `writes`-th write; False when it
    ended by itself first."""
    mark = s3.recorder.mark()
    deadline = time.monotonic() + 30
    while proc.poll() is None and time.monotonic() < deadline:
        done = [r for r in s3.recorder.writes(mark, bucket) if r.status]
        if len(done) >= writes:
            time.sleep(extra)
            break
        time.sleep(0.005)
    if proc.poll() is not None:
        return False
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    return True


@pytest.mark.long
def test_uploads_killed_at_random_points_always_resume(s3, s3_client, bucket, tmp_path, run_cli):
    rng = random.Random(SEED)
    src = tmp_path / "ckpt"
    write_checkpoint(src, SIZES, seed=SEED)
    log = tmp_path / "uploader.log"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    kills = twice = rounds = 0
    started = time.monotonic()
    while (kills < KILLS or twice < TWICE) and rounds < MAX_ROUNDS:
        rounds += 1
        prefix = f"soak/{rounds:02d}"
        dest = f"s3://{bucket}/{prefix}"
        cmd = [sys.executable, "-m", "checkpoint", *upload_args(src, dest, s3, *FLAGS)]
        cmd += ["--max-bandwidth", "24MiB"]  # a part takes ~0.2 s: kills land mid-part
        snaps: list[Kill] = []
        for attempt in range(2 if rng.random() < 0.5 else 1):
            writes = rng.randint(1, 12) if attempt == 0 else rng.randint(0, 3)
            app = f"soak-{rounds:02d}-{attempt}"
            if not kill_after(start(cmd, env, log, app), s3, bucket, writes, rng.uniform(0, 0.15)):
                break
            snaps.append(snapshot(s3, s3_client, bucket, f"{prefix}/"))
            snaps[-1].app = app
        kills += len(snaps)
        twice += len(snaps) == 2

        code, _, err = run_cli(*upload_args(src, dest, s3, *FLAGS))
        assert code == 0, f"round {rounds} (seed {SEED}): resume failed:\n{err}\n{log.read_text()}"
        resumed = err
        code, _, err = run_cli("verify", "--dest", dest, "--endpoint-url", s3.endpoint)
        assert code == 0, f"round {rounds} (seed {SEED}): verify failed:\n{err}"
        for kill in snaps:
            again = [
                (w.op, w.key, w.part, w.app or "the resume")
                for w in s3.recorder.writes(kill.mark, bucket)
                if w.app != kill.app  # the killed process's own, handled late
                and (w.key in kill.complete or w.part in kill.parts.get(w.key, ()))
            ]
            assert again == [], (
                f"round {rounds} (seed {SEED}): sent again after a kill of {kill.app}: {again}; "
                f"listed at the kill: {kill.listed}; every request for those keys (seq, op, "
                f"upload, part, status, app, mark {kill.mark}): "
                + str(
                    [
                        (r.seq, r.op, r.upload, r.part, r.status, r.app or "the resume")
                        for r in s3.recorder.since(0, bucket)
                        if r.key in {a[1] for a in again}
                    ]
                )
                + f"; the resume said: {resumed}; the uploaders said: {log.read_text()[-2000:]}"
            )
        left = s3_client.list_multipart_uploads(Bucket=bucket, Prefix=f"{prefix}/")
        assert left.get("Uploads", []) == [], f"round {rounds}: incomplete uploads left"
    elapsed = time.monotonic() - started
    assert kills >= KILLS and twice >= TWICE, (kills, twice, rounds)
    # The killed processes' requests were told apart by their app id (else every write after a
    # kill was judged, the killed process's own included: stricter, never laxer).
    assert any(r.app.startswith("soak-") for r in s3.recorder.since(0, bucket))
    if os.environ.get("SOAK_REPORT"):
        sys.stderr.write(
            f"soak: seed {SEED}, {rounds} rounds (resumes), {kills} kills, "
            f"{twice} twice in a row, {elapsed:.1f} s\n"
        )
