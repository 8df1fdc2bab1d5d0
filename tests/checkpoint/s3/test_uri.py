"""S3 URIs as the user writes them (--source, --dest)."""

from __future__ import annotations

import pytest

from checkpoint.errors import UsageError
from checkpoint.s3.uri import S3Location, parse_s3_uri


def test_s3_uris():
    assert parse_s3_uri("s3://bucket/a/b/", "--dest") == S3Location("bucket", "a/b")
    assert parse_s3_uri("s3://bucket", "--dest").key("x.json") == "x.json"
    with pytest.raises(UsageError, match="--dest 's3://bkt/a//c': the prefix has an empty"):
        parse_s3_uri("s3://bkt/a//c", "--dest")
    with pytest.raises(UsageError, match="--source 'https://x' must be an S3 URI"):
        parse_s3_uri("https://x", "--source")
