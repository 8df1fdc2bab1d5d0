"""The destination prefix, s3://bucket/prefix in the cluster's Region, and what its objects say.

Every object is written with a CRC64NVME checksum that S3 validates on receipt and keeps as a
full-object checksum (multipart included), plus metadata naming the source's identity of the
content, so that a rerun knows from a HeadObject whether the object is right.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from botocore.exceptions import BotoCoreError, ClientError

from checkpoint.errors import TransferError
from checkpoint.manifest import CHECKSUM_ALGORITHM
from checkpoint.s3.errors import error_code, s3_error
from checkpoint.s3.uri import S3Location

META_SOURCE_ID = "hyperpod-dpd-source-id"
META_CRC64NVME = "hyperpod-dpd-crc64nvme"
META_SHA256 = "hyperpod-dpd-sha256"
# S3's answer about a multipart upload id it no longer knows: completed or aborted, gone.
GONE = ("NoSuchUpload",)


@dataclass(frozen=True)
class ObjectState:
    key: str
    size: int
    crc64nvme: str | None  # S3's full-object CRC64NVME, when the object has one
    metadata: dict[str, str]
    version_id: str | None


@dataclass(frozen=True)
class IncompleteUpload:
    """A multipart upload started under the prefix and neither completed nor aborted."""

    key: str
    upload_id: str
    initiated: str  # sortable: ISO time, or a datetime's str()
    checksum_algorithm: str | None


class Destination:
    def __init__(self, client, location: S3Location):
        self.client = client
        self.location = location

    def head(self, key: str) -> ObjectState | None:
        try:
            r = self.client.head_object(
                Bucket=self.location.bucket, Key=key, ChecksumMode="ENABLED"
            )
        except ClientError as exc:
            if error_code(exc) in ("404", "NoSuchKey", "NotFound"):
                return None
            raise s3_error(exc, "read", f"s3://{self.location.bucket}/{key}") from None
        except BotoCoreError as exc:
            raise s3_error(exc, "read", f"s3://{self.location.bucket}/{key}") from None
        crc = r.get("ChecksumCRC64NVME")
        if crc and "-" in crc:  # a composite (per-part) checksum is not the object's
            crc = None
        return ObjectState(
            key=key,
            size=r["ContentLength"],
            crc64nvme=crc,
            metadata={k.lower(): v for k, v in r.get("Metadata", {}).items()},
            version_id=r.get("VersionId") if r.get("VersionId") not in (None, "null") else None,
        )

    # Pages are followed by hand, not with get_paginator(): loading the paginator model costs
    # ~10 ms of CPU, which is noticeable in a rerun that does little else.
    def list_keys(self) -> dict[str, int]:
        keys: dict[str, int] = {}
        args = {"Bucket": self.location.bucket, "Prefix": self.location.list_prefix}
        try:
            while True:
                page = self.client.list_objects_v2(**args)
                for obj in page.get("Contents", []):
                    keys[obj["Key"]] = obj["Size"]
                if not page.get("IsTruncated"):
                    return keys
                args["ContinuationToken"] = page["NextContinuationToken"]
        except (ClientError, BotoCoreError) as exc:
            raise s3_error(exc, "list", self.location.uri) from None

    def incomplete_uploads(self) -> list[IncompleteUpload]:
        """The multipart uploads under the prefix that were started and neither completed nor
        aborted (by an interrupted run)."""
        return list(self._incomplete_uploads())

    def _incomplete_uploads(self) -> Iterator[IncompleteUpload]:
        args = {"Bucket": self.location.bucket, "Prefix": self.location.list_prefix}
        while True:
            try:
                page = self.client.list_multipart_uploads(**args)
            except (ClientError, BotoCoreError) as exc:
                raise s3_error(
                    exc, "clean up incomplete uploads under", self.location.uri
                ) from None
            for upload in page.get("Uploads", []):
                yield IncompleteUpload(
                    key=upload["Key"],
                    upload_id=upload["UploadId"],
                    initiated=str(upload.get("Initiated", "")),
                    checksum_algorithm=upload.get("ChecksumAlgorithm"),
                )
            if not page.get("IsTruncated"):
                return
            args["KeyMarker"] = page["NextKeyMarker"]
            args["UploadIdMarker"] = page["NextUploadIdMarker"]

    def abort_upload(self, key: str, upload_id: str) -> bool:
        """Abort one multipart upload; False when S3 no longer knows it (NoSuchUpload: completed
        or aborted meanwhile, by the run that started it or another one): gone either way."""
        try:
            self.client.abort_multipart_upload(
                Bucket=self.location.bucket, Key=key, UploadId=upload_id
            )
        except ClientError as exc:
            if error_code(exc) in GONE:
                return False
            raise s3_error(exc, "clean up incomplete uploads under", self.location.uri) from None
        except BotoCoreError as exc:
            raise s3_error(exc, "clean up incomplete uploads under", self.location.uri) from None
        return True

    def abort_incomplete_uploads(self, uploads: Iterable[IncompleteUpload] | None = None) -> int:
        """Abort multipart uploads left under the prefix by an interrupted run (`uploads`, else
        all those listed, page by page); how many were aborted (one already gone is not an
        error, and not counted)."""
        chosen = self._incomplete_uploads() if uploads is None else uploads
        return sum(self.abort_upload(u.key, u.upload_id) for u in chosen)

    def delete_keys(self, keys: list[str]) -> None:
        for start in range(0, len(keys), 1000):
            batch = [{"Key": k} for k in keys[start : start + 1000]]
            try:
                r = self.client.delete_objects(
                    Bucket=self.location.bucket, Delete={"Objects": batch, "Quiet": True}
                )
            except (ClientError, BotoCoreError) as exc:
                raise s3_error(exc, "delete objects under", self.location.uri) from None
            if r.get("Errors"):
                first = r["Errors"][0]
                raise TransferError(
                    f"could not delete s3://{self.location.bucket}/{first['Key']}: "
                    f"{first.get('Code')}: {first.get('Message')}"
                )

    def probe_write(self, key: str) -> None:
        """Fail fast without write permission: start and abort a multipart upload (no object)."""
        target = f"s3://{self.location.bucket}/{key}"
        try:
            upload = self.client.create_multipart_upload(
                Bucket=self.location.bucket, Key=key, ChecksumAlgorithm=CHECKSUM_ALGORITHM
            )
            self.client.abort_multipart_upload(
                Bucket=self.location.bucket, Key=key, UploadId=upload["UploadId"]
            )
        except (ClientError, BotoCoreError) as exc:
            raise s3_error(exc, "write", target) from None
