"""What an upload must transfer: every destination object HEADed, compared with its file.

An object is kept when its size, its S3 CRC64NVME and its recorded source identity all match.
A local file's CRC64NVME comes from the checksum cache when the file is unchanged since it was
last hashed, else from reading it. Only files with an object of the same size to compare
against are hashed here; the others are hashed right before their upload, so a first upload of
a large local checkpoint starts at once and reads each file from disk once (the upload's read
finds it in the page cache).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from checkpoint.checksum_cache import ChecksumCache
from checkpoint.hashing import Digests
from checkpoint.manifest import Manifest, ManifestFile
from checkpoint.progress import Progress
from checkpoint.s3.destination import (
    META_CRC64NVME,
    META_SHA256,
    META_SOURCE_ID,
    Destination,
    ObjectState,
)
from checkpoint.sources.base import SourceFile
from checkpoint.upload.checks import digest_local
from checkpoint.upload.options import UploadOptions


@dataclass
class Plan:
    keep: dict[str, ManifestFile]
    todo: list[SourceFile]
    digests: dict[str, Digests]  # local files hashed while planning


def plan_upload(
    files: list[SourceFile],
    manifest: Callable[[], Manifest | None],
    dest: Destination,
    options: UploadOptions,
    *,
    local: bool,
    cache: ChecksumCache | None,
    hashing: threading.BoundedSemaphore,
) -> Plan:
    """`manifest`: the existing manifest, asked for once the HEADs are done (it is read
    meanwhile). `local`: the files are on local disk, hashed here when an object may hold them;
    at most as many at once as `hashing` lets through."""
    progress = (
        Progress(
            {"check": sum(f.size for f in files)},
            files=len(files),
            mode=options.progress,
            interval=options.progress_interval,
        )
        if local
        else None
    )
    keep: dict[str, ManifestFile] = {}
    todo: list[SourceFile] = []
    digests: dict[str, Digests] = {}

    workers = min(len(files), options.concurrency, 32)  # HEADs wait on the network

    def check(f: SourceFile) -> tuple[SourceFile, ObjectState | None, Digests | None]:
        state = dest.head(dest.location.key(f.path))
        digest = None
        if progress is not None:
            if _may_hold(f, state):
                with hashing:
                    digest = digest_local(
                        f, Path(f.location), cache, lambda n: progress.add("check", n)
                    )
            else:  # nothing to compare with: hashed when uploaded
                progress.add("check", f.size)
            progress.file_done()
        return f, state, digest

    with contextlib.ExitStack() as stack:
        if progress:
            stack.enter_context(progress)
        with ThreadPoolExecutor(workers, thread_name_prefix="plan") as pool:
            results = list(pool.map(check, files))
    existing = manifest()
    recorded = {f.path: f for f in existing.files} if existing else {}
    for f, state, digest in results:
        if digest is not None:
            digests[f.path] = digest
        entry = _kept_entry(f, state, digest, recorded.get(f.path))
        if entry is not None:
            keep[f.path] = entry
        else:
            todo.append(f)
    return Plan(keep=keep, todo=todo, digests=digests)


def _may_hold(f: SourceFile, state: ObjectState | None) -> bool:
    """Whether the object can be compared with the file at all: it exists, has the file's size
    and a full-object CRC64NVME."""
    return state is not None and state.size == f.size and state.crc64nvme is not None


def _kept_entry(
    f: SourceFile,
    state: ObjectState | None,
    digest: Digests | None,
    recorded: ManifestFile | None,
) -> ManifestFile | None:
    """The manifest entry of an object that already holds the file's bytes, else None."""
    if not _may_hold(f, state):
        return None
    if digest is not None:  # local file: its bytes against S3's checksum of the object
        if state.crc64nvme != digest.crc64nvme:
            return None
        source_id = f"crc64nvme:{digest.crc64nvme}"
    else:
        source_id = f.source_id or ""
        if state.metadata.get(META_SOURCE_ID) != source_id:
            return None
        # The CRC recorded at upload (or by the manifest) must still be the object's: an object
        # overwritten behind our back, with its metadata copied, fails here.
        expected = state.metadata.get(META_CRC64NVME) or (recorded.crc64nvme if recorded else None)
        if expected != state.crc64nvme:
            return None
    return ManifestFile(
        path=f.path,
        size=f.size,
        crc64nvme=state.crc64nvme,
        source_id=source_id,
        sha256=f.sha256 or state.metadata.get(META_SHA256),
        version_id=state.version_id,
    )
