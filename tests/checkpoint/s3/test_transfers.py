"""The transfer client `auto` picks."""

from __future__ import annotations

from tests.checkpoint.test_resync import run_json
from tests.checkpoint.test_upload_local import upload


def test_auto_uses_the_classic_client_for_a_custom_endpoint(s3, bucket, local_checkpoint, run_cli):
    src, _ = local_checkpoint
    assert run_json(run_cli, *upload(src, bucket, s3))["transferClient"] == "classic"
