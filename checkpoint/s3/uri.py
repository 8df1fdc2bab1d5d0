"""s3://bucket/prefix: parsed and checked once, at the command line, into an S3Location."""

from __future__ import annotations

import re
from dataclasses import dataclass

from checkpoint.errors import UsageError

_BUCKET_NAME = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")


@dataclass(frozen=True)
class S3Location:
    bucket: str
    prefix: str  # no leading or trailing '/'

    def key(self, path: str) -> str:
        return f"{self.prefix}/{path}" if self.prefix else path

    @property
    def list_prefix(self) -> str:
        return f"{self.prefix}/" if self.prefix else ""

    @property
    def uri(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}" if self.prefix else f"s3://{self.bucket}"


def parse_s3_uri(uri: str, flag: str) -> S3Location:
    """s3://bucket/some/prefix -> S3Location; UsageError naming `flag` otherwise."""
    if not uri.startswith("s3://"):
        raise UsageError(f"{flag} {uri!r} must be an S3 URI: s3://BUCKET/PREFIX")
    bucket, _, prefix = uri[len("s3://") :].partition("/")
    if not _BUCKET_NAME.match(bucket) or ".." in bucket:
        raise UsageError(
            f"{flag} {uri!r}: {bucket!r} is not a valid bucket name (3-63 characters: lowercase "
            "letters, digits, '.' and '-')"
        )
    prefix = prefix.strip("/")
    if any(part in ("", ".", "..") for part in prefix.split("/")) and prefix:
        raise UsageError(f"{flag} {uri!r}: the prefix has an empty, '.' or '..' path segment")
    return S3Location(bucket, prefix)
