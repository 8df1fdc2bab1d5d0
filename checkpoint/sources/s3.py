"""Objects under s3://bucket/prefix as a source, copied server-side (no bytes through here).

A prefix staged by hyperpod-dpd before has a manifest: the checksums its own source published
are kept from it.
"""

from __future__ import annotations

from botocore.exceptions import BotoCoreError, ClientError

from checkpoint.errors import SourceError, TransferError
from checkpoint.manifest import read_manifest
from checkpoint.s3.errors import error_code
from checkpoint.s3.uri import S3Location
from checkpoint.sources.base import SourceFile


class S3Source:
    """Objects under s3://bucket/prefix, copied server-side to the destination."""

    def __init__(self, client, bucket: str, prefix: str, revision: str | None = None):
        self.client = client
        self.bucket = bucket
        self.prefix = prefix.strip("/")
        self._location = S3Location(bucket, self.prefix)
        self.uri = self._location.uri
        self.revision = revision

    def list_files(self) -> list[SourceFile]:
        start = self._location.list_prefix
        files = []
        try:
            published = read_manifest(self.client, self.bucket, self.prefix)
            pages = self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=start
            )
            for page in pages:
                for obj in page.get("Contents", []):
                    key = obj["Key"]
                    if key.endswith("/"):
                        continue  # a "folder" marker
                    files.append(
                        SourceFile(
                            path=key[len(start) :],
                            size=obj["Size"],
                            source_id=f"s3-etag:{obj['ETag'].strip(chr(34))}",
                            location=key,
                        )
                    )
        except ClientError as exc:
            raise SourceError(
                f"cannot list --source {self.uri} ({error_code(exc)}): {exc}"
            ) from None
        except BotoCoreError as exc:
            raise TransferError(f"cannot list --source {self.uri}: {exc}") from None
        if published is not None:
            # Staged by hyperpod-dpd before: keep the checksums its source published.
            known = {f.path: f for f in published.files}
            files = [
                SourceFile(
                    path=f.path,
                    size=f.size,
                    source_id=f.source_id,
                    sha256=known[f.path].sha256 if f.path in known else None,
                    location=f.location,
                )
                for f in files
            ]
            if self.revision is None:
                self.revision = published.revision
        return files

    def published_crc64nvme(self, f: SourceFile) -> str | None:
        """The source object's full-object CRC64NVME, when S3 holds one."""
        head = self.client.head_object(Bucket=self.bucket, Key=f.location, ChecksumMode="ENABLED")
        value = head.get("ChecksumCRC64NVME")
        return value if value and "-" not in value else None
