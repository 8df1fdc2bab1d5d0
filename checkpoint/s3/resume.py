"""Resuming a multipart upload that an interrupted run left behind (kill -9, a node lost).

The parts S3 already holds are kept only when they verifiably hold the file's bytes: a part is
trusted when its size is the one its number must have at this part size and its checksum
matches the file's bytes at its place (the CRC64NVME S3 lists for it, else an ETag that is the
MD5 of a plain part); any other part is sent again. An upload id S3 no longer knows (completed
or aborted meanwhile: by the run that started it, or by S3 itself) is no error: the caller then
uploads the file anew. The object completed here is checked like any other afterwards (its
size and full-object CRC64NVME against the bytes read locally, its metadata).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from botocore.exceptions import BotoCoreError, ClientError
from s3transfer.utils import ChunksizeAdjuster

from checkpoint.hashing import crc64nvme_of
from checkpoint.manifest import CHECKSUM_ALGORITHM
from checkpoint.s3.destination import GONE, IncompleteUpload
from checkpoint.s3.errors import error_code, s3_error

_MD5_ETAG = re.compile(r"[0-9a-f]{32}")


@dataclass(frozen=True)
class Resumed:
    parts: int  # of the file at this part size
    reused: int  # already in S3 and verified: not sent again
    sent: int


def pick_resumable(
    uploads: Iterable[IncompleteUpload], keys: set[str]
) -> tuple[dict[str, IncompleteUpload], list[IncompleteUpload]]:
    """The upload to resume for each of `keys` (the newest one with a CRC64NVME checksum), and
    the uploads to abort: every other one."""
    resumable: dict[str, IncompleteUpload] = {}
    stale: list[IncompleteUpload] = []
    for upload in sorted(uploads, key=lambda u: (u.key, u.initiated), reverse=True):
        if (
            upload.key in keys
            and upload.key not in resumable
            and upload.checksum_algorithm == CHECKSUM_ALGORITHM
        ):
            resumable[upload.key] = upload
        else:
            stale.append(upload)
    return resumable, stale


def part_size_for(size: int, part_size: int) -> int:
    """The part size the transfer manager uses for a file of `size` bytes (raised for files
    that would need more than S3's 10,000 parts)."""
    return ChunksizeAdjuster().adjust_chunksize(part_size, size)


def resume_upload(
    client,
    path: Path,
    bucket: str,
    key: str,
    upload_id: str,
    *,
    part_size: int,
    concurrency: int,
    on_bytes: Callable[[int], None],
) -> Resumed | None:
    """Complete the upload `upload_id` of `key` with the bytes of `path`: the verified parts it
    holds kept, the others sent. None when S3 no longer knows the upload (nothing was written).
    """
    uri = f"s3://{bucket}/{key}"
    size = path.stat().st_size
    chunk = part_size_for(size, part_size)
    count = max(1, -(-size // chunk))
    ident = {"Bucket": bucket, "Key": key, "UploadId": upload_id}
    try:
        listed = _list_parts(client, ident)
        done: dict[int, dict] = {}
        with open(path, "rb") as fh:
            for part in listed:
                number = part.get("PartNumber", 0)
                start = (number - 1) * chunk
                if not 1 <= number <= count or part.get("Size") != min(chunk, size - start):
                    continue
                data = os.pread(fh.fileno(), min(chunk, size - start), start)
                crc = crc64nvme_of(data)
                if _trusted(part, data, crc):
                    done[number] = {"PartNumber": number, "ETag": part["ETag"]}
                    done[number]["ChecksumCRC64NVME"] = crc
                    on_bytes(len(data))
        reused = len(done)
        missing = [n for n in range(1, count + 1) if n not in done]

        def send(number: int) -> dict:
            start = (number - 1) * chunk
            with open(path, "rb") as fh:
                data = os.pread(fh.fileno(), min(chunk, size - start), start)
            r = client.upload_part(
                **ident, PartNumber=number, Body=data, ChecksumAlgorithm=CHECKSUM_ALGORITHM
            )
            on_bytes(len(data))
            return {
                "PartNumber": number,
                "ETag": r["ETag"],
                "ChecksumCRC64NVME": r.get("ChecksumCRC64NVME") or crc64nvme_of(data),
            }

        if missing:
            workers = max(1, min(len(missing), concurrency, 8))
            with ThreadPoolExecutor(workers, thread_name_prefix="resume") as pool:
                for sent in pool.map(send, missing):
                    done[sent["PartNumber"]] = sent
        parts = [done[n] for n in range(1, count + 1)]
        client.complete_multipart_upload(**ident, MultipartUpload={"Parts": parts})
    except ClientError as exc:
        if error_code(exc) in GONE:
            return None
        raise s3_error(exc, "upload to", uri) from None
    except BotoCoreError as exc:
        raise s3_error(exc, "upload to", uri) from None
    return Resumed(parts=count, reused=reused, sent=len(missing))


def _list_parts(client, ident: dict[str, str]) -> list[dict]:
    parts: list[dict] = []
    args: dict = dict(ident)
    while True:
        page = client.list_parts(**args)
        parts.extend(page.get("Parts", []))
        if not page.get("IsTruncated"):
            return parts
        args["PartNumberMarker"] = page["NextPartNumberMarker"]


def _trusted(part: dict, data: bytes, crc: str) -> bool:
    """Whether the listed part verifiably holds `data` (whose CRC64NVME is `crc`)."""
    listed = part.get("ChecksumCRC64NVME")
    if listed:
        return listed == crc
    etag = str(part.get("ETag", "")).strip('"')
    return (
        bool(_MD5_ETAG.fullmatch(etag))
        and etag == hashlib.md5(data, usedforsecurity=False).hexdigest()
    )
