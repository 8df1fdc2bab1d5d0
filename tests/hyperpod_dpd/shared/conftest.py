"""What the nodes' boot checks read, faked where the tests of preflight and verify fake AWS: S3 as
a local moto server (one per test session; each test a bucket of its own where versions
matter), SageMaker as botocore's Stubber (real request and response validation), and the stack's
outputs from a `pulumi` shim on PATH."""

from __future__ import annotations

import itertools
import json

import boto3
import pytest

from specs.lifecycle import ON_CREATE_KEY, on_create_bytes
from tests.checkpoint.s3server import QuietMotoServer

REGION = "us-east-2"
_numbers = itertools.count()


@pytest.fixture(scope="session")
def s3_server():
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AWS_ACCESS_KEY_ID", "testing")
        mp.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        mp.delenv("AWS_PROFILE", raising=False)
        with QuietMotoServer() as server:  # no access log: tests/support/quiet_output.py
            yield server.endpoint


@pytest.fixture
def s3_client(s3_server, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    return boto3.client("s3", endpoint_url=s3_server, region_name=REGION)


@pytest.fixture
def lifecycle_bucket(s3_client) -> tuple[str, str]:
    """A new versioned lifecycle bucket holding this checkout's script as `pulumi up` uploads
    it: (bucket, the version S3 gave that upload)."""
    bucket = f"sagemaker-test-{next(_numbers)}"
    s3_client.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": REGION})
    s3_client.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    put = s3_client.put_object(Bucket=bucket, Key=ON_CREATE_KEY, Body=on_create_bytes())
    return bucket, put["VersionId"]


def pulumi_says(tmp_path, monkeypatch, outputs: dict[str, str]) -> None:
    """A `pulumi` on PATH whose `stack output --json --stack S` prints `outputs` and whose
    `stack output NAME --stack S` prints the named one."""
    shims = tmp_path / "bin"
    shims.mkdir(exist_ok=True)
    (shims / "outputs.json").write_text(json.dumps(outputs))
    cases = "".join(f"  {name}) echo {value} ;;\n" for name, value in outputs.items())
    (shims / "pulumi").write_text(
        f'#!/bin/sh\ncase "$3" in\n  --json) cat "{shims}/outputs.json" ;;\n{cases}'
        "  *) exit 1 ;;\nesac\n"
    )
    (shims / "pulumi").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shims}:/usr/bin:/bin")
