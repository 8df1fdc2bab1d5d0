"""Our S3 clients: which endpoints are AWS's own, what the classic client signs and sends over
plain http, and the send blocks only our clients use."""

from __future__ import annotations

import botocore.httpsession
import pytest
import s3transfer.utils

from checkpoint.s3.client import SEND_BLOCK, default_session, is_aws_endpoint, make_client
from tests.checkpoint.test_resync import run_json
from tests.checkpoint.test_upload_local import MANIFEST, PREFIX, upload


@pytest.mark.parametrize(
    ("endpoint", "aws"),
    [
        (None, True),
        ("https://s3.us-east-2.amazonaws.com", True),
        ("https://s3-fips.us-gov-west-1.amazonaws.com", True),
        ("https://bucket.vpce-0abc-xyz.s3.us-east-1.vpce.amazonaws.com", True),
        ("https://s3.cn-north-1.amazonaws.com.cn", True),
        ("https://s3.dualstack.us-east-1.api.aws", True),
        ("http://127.0.0.1:9000", False),
        ("https://minio.internal.example.com", False),
        ("https://amazonaws.com.evil.example", False),
        ("https://notamazonaws.com", False),
    ],
)
def test_which_endpoints_are_aws(endpoint, aws):
    assert is_aws_endpoint(endpoint) is aws


def test_classic_signs_each_payload_with_its_own_hash_over_plain_http(
    s3, bucket, local_checkpoint, run_cli, monkeypatch
):
    """Over plain http the classic client signs every PutObject/UploadPart payload (its SHA-256,
    as the aws-cli does), sends it 1 MiB at a time, and the headers describe the bytes that
    arrived."""
    src, _ = local_checkpoint
    sizes = set()
    original = s3transfer.utils.ReadFileChunk.read

    def recording(self, amount=None):
        sizes.add(amount)
        return original(self, amount)

    monkeypatch.setattr(s3transfer.utils.ReadFileChunk, "read", recording)
    s3.recorder.capture_bodies = True
    try:
        result = run_json(run_cli, *upload(src, bucket, s3, "--transfer-client", "classic"))
    finally:
        s3.recorder.capture_bodies = False
    assert result["transferClient"] == "classic"
    assert SEND_BLOCK in sizes  # sent 1 MiB at a time (botocore's own signer reads as it likes)

    bodies = [b for b in s3.recorder.bodies if b.key.startswith(f"{PREFIX}/") and b.key != MANIFEST]
    assert {b.op for b in bodies} == {"PutObject", "UploadPart"}
    for body in bodies:
        assert body.content_sha256 == body.sha256  # the payload is signed, with its own hash
        assert body.checksum_crc64nvme == body.crc64nvme


def test_the_larger_send_blocks_are_for_our_clients_only():
    before = botocore.httpsession.BUFFER_SIZE
    client = make_client(default_session(), "us-east-2", "http://127.0.0.1:9", 4)
    assert before == botocore.httpsession.BUFFER_SIZE  # botocore's default, for other clients
    assert client._endpoint.http_session._manager.connection_pool_kw["blocksize"] == SEND_BLOCK
