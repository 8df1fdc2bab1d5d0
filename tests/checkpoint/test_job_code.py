"""The staging Job's code, as the ConfigMap ships it, runs on its own against a real S3."""

from __future__ import annotations

import json
import subprocess
import sys

from checkpoint.manifest import manifest_key
from specs.staging import code_files, unpack_command
from tests.checkpoint.conftest import REGION, write_checkpoint


def materialize(app) -> None:
    """Lay the ConfigMap out as the Job does: its keys flat in one directory (the volume), then
    the Job's own shell loop copies each to its path."""
    code = app.parent / "code"
    code.mkdir()
    for key, text in code_files().items():
        (code / key).write_text(text)
    subprocess.run(["sh", "-c", unpack_command(str(code), str(app))], check=True)


def test_shipped_code_is_complete_and_stages_a_checkpoint(s3, s3_client, bucket, tmp_path):
    app = tmp_path / "app"
    materialize(app)
    where = subprocess.run(
        [sys.executable, "-c", "import checkpoint.upload.run as u; print(u.__file__)"],
        cwd=app,
        capture_output=True,
        text=True,
        check=True,
    )
    assert where.stdout.strip().startswith(str(app))  # the ConfigMap's copy, not the repo's
    src = tmp_path / "ckpt"
    write_checkpoint(src, {"config.json": 300, "model-00001.safetensors": 2 * 1024 * 1024})
    result = subprocess.run(
        [sys.executable, "-m", "checkpoint", "upload", "--source", str(src),
         "--dest", f"s3://{bucket}/models/job", "--endpoint-url", s3.endpoint,
         "--region", REGION, "--progress", "plain"],
        cwd=app, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    manifest = json.loads(
        s3_client.get_object(Bucket=bucket, Key=manifest_key("models/job"))["Body"].read()
    )
    assert sorted(f["path"] for f in manifest["files"]) == [
        "config.json",
        "model-00001.safetensors",
    ]
