"""Checksums of local files, computed in one read.

CRC64NVME is what S3 stores as a full-object checksum (multipart uploads included), so it can
be compared with `HeadObject(ChecksumMode=ENABLED)` without downloading anything. SHA-256 is
what the Hugging Face Hub publishes for LFS files and git's blob SHA-1 what it publishes for
the others; they are computed only when a source publishes one to check against.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from awscrt import checksums

# Read size for hashing local files. Small enough that the buffer is still in the CPU's cache
# when awscrt's CRC64NVME (C, vectorized) runs over it after the read() copied it there:
# measured on 4 x 256 MiB from the page cache, two files at a time, client CPU per GiB was
# 0.10 s at 1-2 MiB, 0.15 s at 8 MiB, 0.22 s at 16 MiB.
CHUNK = 2**20


@dataclass(frozen=True)
class Digests:
    size: int
    crc64nvme: str  # base64 of the 8 big-endian bytes, as S3 reports it
    sha256: str | None = None  # hex
    git_sha1: str | None = None  # hex of git's blob object id


def crc64nvme_b64(value: int) -> str:
    return base64.b64encode(value.to_bytes(8, "big")).decode("ascii")


def crc64nvme_of(data: bytes | memoryview) -> str:
    """The CRC64NVME of `data`, as S3 reports it."""
    return crc64nvme_b64(checksums.crc64nvme(data))


def digest_chunks(
    chunks: Iterable[bytes | memoryview],
    *,
    size: int,
    sha256: bool = False,
    git_sha1: bool = False,
    on_bytes: Callable[[int], None] | None = None,
) -> Digests:
    """Checksums of a byte stream of `size` bytes (git's blob id needs the size up front)."""
    crc = 0
    sha = hashlib.sha256() if sha256 else None
    git = hashlib.sha1(b"blob %d\0" % size, usedforsecurity=False) if git_sha1 else None
    seen = 0
    for chunk in chunks:
        crc = checksums.crc64nvme(chunk, crc)
        if sha is not None:
            sha.update(chunk)
        if git is not None:
            git.update(chunk)
        seen += len(chunk)
        if on_bytes is not None:
            on_bytes(len(chunk))
    if seen != size:
        raise ValueError(f"read {seen} bytes, expected {size}")
    return Digests(
        size=size,
        crc64nvme=crc64nvme_b64(crc),
        sha256=sha.hexdigest() if sha else None,
        git_sha1=git.hexdigest() if git else None,
    )


def digest_file(
    path: Path,
    *,
    sha256: bool = False,
    git_sha1: bool = False,
    on_bytes: Callable[[int], None] | None = None,
) -> Digests:
    """Checksums of the file as it is now; raises ValueError if it changes size while read."""
    return digest_file_stat(path, sha256=sha256, git_sha1=git_sha1, on_bytes=on_bytes)[0]


def digest_file_stat(
    path: Path,
    *,
    sha256: bool = False,
    git_sha1: bool = False,
    on_bytes: Callable[[int], None] | None = None,
) -> tuple[Digests, os.stat_result, os.stat_result]:
    """digest_file(), with what fstat() said of the open file before and after the read (the
    checksum cache only remembers a digest when the two agree).

    One CHUNK-sized buffer, reused for the whole file (no allocation per read).
    """
    with path.open("rb", buffering=0) as f:
        before = os.fstat(f.fileno())

        def chunks():
            buf = bytearray(min(CHUNK, max(before.st_size, 1)))
            view = memoryview(buf)
            while n := f.readinto(buf):
                yield view[:n]

        digests = digest_chunks(
            chunks(), size=before.st_size, sha256=sha256, git_sha1=git_sha1, on_bytes=on_bytes
        )
        after = os.fstat(f.fileno())
    return digests, before, after
