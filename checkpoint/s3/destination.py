"""The destination prefix, s3://bucket/prefix in the cluster's Region, and what its objects say.

Every object is written with a CRC64NVME checksum that S3 validates on receipt and keeps as a
full-object checksum (multipart included), plus metadata naming the source's identity of the
content, so that a rerun knows from a HeadObject whether the object is right.
"""

from __future__ import annotations

from dataclasses import dataclass

from botocore.exceptions import BotoCoreError, ClientError

from checkpoint.errors import TransferError
from checkpoint.manifest import CHECKSUM_ALGORITHM
from checkpoint.s3.errors import error_code, s3_error
from checkpoint.s3.uri import S3Location

META_SOURCE_ID = "hyperpod-dpd-source-id"
META_CRC64NVME = "hyperpod-dpd-crc64nvme"
META_SHA256 = "hyperpod-dpd-sha256"


@dataclass(frozen=True)
class ObjectState:
    key: str
    size: int
    crc64nvme: str | None  # S3's full-object CRC64NVME, when the object has one
    metadata: dict[str, str]
    version_id: str | None


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

    def abort_incomplete_uploads(self) -> int:
        """Abort multipart uploads left under the prefix by an interrupted run."""
        aborted = 0
        args = {"Bucket": self.location.bucket, "Prefix": self.location.list_prefix}
        try:
            while True:
                page = self.client.list_multipart_uploads(**args)
                for upload in page.get("Uploads", []):
                    self.client.abort_multipart_upload(
                        Bucket=self.location.bucket, Key=upload["Key"], UploadId=upload["UploadId"]
                    )
                    aborted += 1
                if not page.get("IsTruncated"):
                    return aborted
                args["KeyMarker"] = page["NextKeyMarker"]
                args["UploadIdMarker"] = page["NextUploadIdMarker"]
        except (ClientError, BotoCoreError) as exc:
            raise s3_error(exc, "clean up incomplete uploads under", self.location.uri) from None

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
