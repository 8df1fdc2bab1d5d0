"""The integrity checks around each upload: the bytes read locally against what the source
lists and publishes, and the object S3 holds afterwards against those bytes.

A local file is hashed through the checksum cache (a retry reads it again whatever the cache
says). The CRC64NVME compared after the transfer is the one S3 computed from what it received,
never a number we sent: see checkpoint/s3/transfers.py.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from checkpoint.checksum_cache import ChecksumCache
from checkpoint.errors import IntegrityError, SourceError
from checkpoint.hashing import Digests, digest_file
from checkpoint.s3.destination import ObjectState
from checkpoint.sources.base import SourceFile


def digest_local(
    f: SourceFile,
    path: Path,
    cache: ChecksumCache | None,
    on_bytes: Callable[[int], None] | None = None,
    refresh: bool = False,
) -> Digests:
    """The checksums of `path` (the file itself or its staged copy) with what `f`'s source
    publishes; local files through the checksum cache."""
    try:
        if cache is not None:
            return cache.digest(path, on_bytes=on_bytes, refresh=refresh)
        return digest_file(
            path, sha256=f.sha256 is not None, git_sha1=f.git_sha1 is not None, on_bytes=on_bytes
        )
    except OSError as exc:
        raise _unreadable(_where(f, path), exc) from None
    except ValueError as exc:
        raise IntegrityError(f"{_where(f, path)} changed while being read ({exc})") from None


def check_readable(files: list[SourceFile]) -> None:
    """Open each local file once (no read): a missing or unreadable file is an error before
    anything in the bucket changes. Most are first read when uploaded, after that."""
    for f in files:
        try:
            os.close(os.open(f.location, os.O_RDONLY))
        except OSError as exc:
            raise _unreadable(f.location, exc) from None


def check_size(f: SourceFile, path: Path, staged: bool) -> None:
    """The file about to be uploaded has the size the source listed."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise _unreadable(_where(f, path), exc) from None
    if size != f.size:
        raise IntegrityError(
            f"{f.path} is {size} bytes, the source lists {f.size}: "
            + ("the download was truncated" if staged else "it changed while staged")
        )


def check_published(f: SourceFile, digest: Digests) -> None:
    if f.sha256 and digest.sha256 != f.sha256:
        raise IntegrityError(
            f"{f.path}: SHA-256 {digest.sha256} does not match the {f.sha256} the source publishes"
        )
    if f.git_sha1 and digest.git_sha1 != f.git_sha1:
        raise IntegrityError(
            f"{f.path}: git blob id {digest.git_sha1} does not match the {f.git_sha1} the source "
            "publishes"
        )


def check_uploaded(f: SourceFile, state: ObjectState | None, digest: Digests, uri: str) -> None:
    """The object at `uri` holds the bytes read locally: their size and CRC64NVME."""
    if state is None or state.size != f.size or state.crc64nvme != digest.crc64nvme:
        found = (
            "no object" if state is None else f"{state.size} bytes with CRC64NVME {state.crc64nvme}"
        )
        raise IntegrityError(
            f"{uri} holds {found} after the upload, expected "
            f"{f.size} bytes with CRC64NVME {digest.crc64nvme}"
        )


def check_copied(
    f: SourceFile, state: ObjectState | None, published: str | None, uri: str, source_uri: str
) -> None:
    """The object at `uri` has the source object's size and a full-object CRC64NVME, the
    source's own when it has one."""
    if (
        state is None
        or state.size != f.size
        or state.crc64nvme is None
        or (published and state.crc64nvme != published)
    ):
        raise IntegrityError(
            f"{uri} does not match {source_uri} after the copy (size or CRC64NVME)"
        )


def _unreadable(where: str, exc: OSError) -> SourceError:
    return SourceError(f"cannot read {where}: {exc.strerror or exc}")


def _where(f: SourceFile, path: Path) -> str:
    """The file for a message: its own path, or the source's name for a downloaded copy."""
    return str(path) if str(path) == f.location else f"{f.path} (downloaded to {path})"
