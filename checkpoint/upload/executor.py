"""Carrying out an upload's plan: the files to transfer, concurrently, each verified, retried.

A file from the Hub is downloaded to a temp directory (within the local disk budget), checked
against its published SHA-256 or git blob id, uploaded and deleted. After each upload the
object's size and CRC64NVME are read back and compared with the bytes read locally; a mismatch
is retried. A file that fails for good stops the others from starting; those in flight finish
and stay, verified, for the rerun.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import boto3

from checkpoint.checksum_cache import ChecksumCache
from checkpoint.disk_budget import DiskBudget, Stopped
from checkpoint.errors import CheckpointError, IntegrityError, TransferError
from checkpoint.hashing import Digests
from checkpoint.manifest import ManifestFile
from checkpoint.progress import Progress
from checkpoint.s3.destination import (
    META_CRC64NVME,
    META_SHA256,
    META_SOURCE_ID,
    Destination,
    IncompleteUpload,
    ObjectState,
)
from checkpoint.s3.errors import s3_error
from checkpoint.s3.resume import resume_upload
from checkpoint.s3.transfers import Transfers
from checkpoint.sources.base import FileSource, Source, SourceFile
from checkpoint.sources.hf import HfSource
from checkpoint.sources.s3 import S3Source
from checkpoint.upload.checks import (
    check_copied,
    check_published,
    check_size,
    check_uploaded,
    digest_local,
)
from checkpoint.upload.options import UploadOptions
from checkpoint.upload.planner import Plan
from checkpoint.upload.result import UploadResult
from checkpoint.upload.workdir import Workdir

# How often the checksum cache is written while files finish uploading (it is also written
# before the transfers and after them, failed or not): one small JSON file per interval at most.
CACHE_SAVE_SECONDS = 10.0

# A failed file is tried again after 0.25 s, then 0.5 s, ... (what a blip of throttling or a
# torn download needs; botocore's own retries already covered each request).
RETRY_DELAY_SECONDS = 0.25


@dataclass(eq=False)
class Executor:
    """Transfers a plan's files: uploads (local and Hub sources) or server-side copies (S3)."""

    source: Source
    dest: Destination
    options: UploadOptions
    session: boto3.session.Session
    region: str  # the bucket's
    log: Callable[[str], None]
    cache: ChecksumCache | None
    hashing: threading.BoundedSemaphore  # shared with the planner: at most one file per core
    stop: threading.Event = field(default_factory=threading.Event)  # a file failed for good
    progress: Progress | None = None
    # S3 key -> the incomplete multipart upload of an interrupted run to finish (its verified
    # parts are not sent again); see checkpoint/s3/resume.py
    resumable: dict[str, IncompleteUpload] = field(default_factory=dict)
    _cache_saved_at: float = field(default_factory=time.monotonic)
    _cache_save_lock: threading.Lock = field(default_factory=threading.Lock)

    def transfer(self, plan: Plan, result: UploadResult) -> dict[str, ManifestFile]:
        """The manifest entries of the files of `plan.todo`, all transferred and verified."""
        opts, loc = self.options, self.dest.location
        staging = isinstance(self.source, FileSource) and self.source.stages
        budget = None
        workdir = None
        staged: Workdir | None = None
        if staging:
            # Fail before downloading anything: a file that can never fit, no access to the
            # model (gated), no permission to write the bucket.
            staged = Workdir(opts.tmp_dir)  # after deleting those of killed runs
            workdir = staged.path
            try:
                budget = DiskBudget(workdir, opts.tmp_limit)
                for f in plan.todo:
                    budget.check(f)
                if isinstance(self.source, HfSource):
                    self.source.check_access(plan.todo[0])
                self.dest.probe_write(loc.key(plan.todo[0].path))
            except BaseException:
                staged.close()
                raise
        total = sum(f.size for f in plan.todo)
        if isinstance(self.source, S3Source):
            phases = {"copy": total}
        elif staging:
            phases = {"download": total, "upload": total}
        else:
            phases = {"upload": total}
        transfers = Transfers(
            self.session,
            self.dest.client,
            region=self.region,
            endpoint_url=opts.endpoint_url,
            kind=opts.transfer_client,
            concurrency=opts.concurrency,
            part_size=opts.part_size,
            max_bandwidth=opts.max_bandwidth,
            log=self.log,
        )
        result.transfer_client = transfers.kind
        self.progress = Progress(
            phases, files=len(plan.todo), mode=opts.progress, interval=opts.progress_interval
        )
        done: dict[str, ManifestFile] = {}
        failures: list[tuple[SourceFile, BaseException]] = []
        workers = max(1, min(len(plan.todo), opts.concurrency, 8 if staging else 32))
        pool = ThreadPoolExecutor(workers, thread_name_prefix="xfer")
        try:
            with self.progress:
                futures = {
                    pool.submit(
                        self._one, f, transfers, plan.digests.get(f.path), budget, workdir
                    ): f
                    for f in plan.todo
                }
                for future, f in futures.items():
                    try:
                        done[f.path] = future.result()
                    except Stopped:
                        pass
                    except Exception as exc:
                        failures.append((f, exc))
        except BaseException:  # Ctrl-C: start no other file; those in flight end on their own
            self.stop.set()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        finally:
            pool.shutdown(wait=True)
            transfers.close()
            if staged is not None:
                staged.close()
            if budget is not None:
                result.peak_tmp_bytes = budget.peak
        if failures:
            f, exc = failures[0]
            staged, total = len(plan.keep) + len(done), len(plan.keep) + len(plan.todo)
            note = (
                f" ({len(failures)} failed; {staged} of {total} files are "
                "staged and verified and stay; no manifest was written: rerun the same command to "
                "transfer the rest)"
            )
            if isinstance(exc, CheckpointError):
                raise type(exc)(f"{exc}{note}") from None
            raise exc
        return done

    def _one(
        self,
        f: SourceFile,
        transfers: Transfers,
        digest: Digests | None,
        budget: DiskBudget | None,
        workdir: Path | None,
    ) -> ManifestFile:
        try:
            return self._attempts(f, transfers, digest, budget, workdir)
        except Stopped:
            raise
        except BaseException:
            self.stop.set()  # start no other file; those in flight finish and stay
            raise

    def _attempts(self, f, transfers, digest, budget, workdir) -> ManifestFile:
        attempts = self.options.file_attempts
        for attempt in range(1, attempts + 1):
            if self.stop.is_set():
                raise Stopped()
            counted: dict[str, int] = {}

            def count(phase: str, n: int, counted=counted) -> None:
                counted[phase] = counted.get(phase, 0) + n
                self.progress.add(phase, n)

            try:
                if isinstance(self.source, S3Source):
                    entry = self._copy(f, transfers, lambda n: count("copy", n))
                else:
                    entry = self._upload(f, transfers, digest, budget, workdir, count, attempt)
                self.progress.file_done()
                self._remember_hashes()
                return entry
            except (TransferError, IntegrityError) as exc:
                for phase, n in counted.items():
                    self.progress.add(phase, -n)
                digest = None  # re-read the bytes on the next attempt
                if attempt == attempts:
                    raise
                self.log(f"retrying {f.path} (attempt {attempt + 1} of {attempts}): {exc}")
                time.sleep(RETRY_DELAY_SECONDS * 2 ** (attempt - 1))
        raise AssertionError("unreachable")

    def _remember_hashes(self) -> None:
        """Write the checksum cache, at most once per CACHE_SAVE_SECONDS, as files finish: a run
        killed outright (kill -9, a node lost) leaves its rerun the hashes of what it uploaded,
        so the rerun compares those files with S3 without reading them again."""
        if self.cache is None:
            return
        with self._cache_save_lock:
            now = time.monotonic()
            if now - self._cache_saved_at < CACHE_SAVE_SECONDS:
                return
            self._cache_saved_at = now
        self.cache.save(wait=False)

    def _upload(self, f, transfers, digest, budget, workdir, count, attempt) -> ManifestFile:
        bucket, key = self.dest.location.bucket, self.dest.location.key(f.path)
        source: FileSource = self.source  # type: ignore[assignment]
        reserve = budget.reserve(f, self.stop) if budget else contextlib.nullcontext()
        with reserve, source.fetch(f, workdir, lambda n: count("download", n)) as path:
            check_size(f, path, source.stages)
            if digest is None:  # a retry reads the bytes again whatever the cache says
                with self.hashing:
                    digest = digest_local(f, path, self.cache, refresh=attempt > 1)
            check_published(f, digest)
            source_id = f.source_id or f"crc64nvme:{digest.crc64nvme}"
            metadata = {META_SOURCE_ID: source_id, META_CRC64NVME: digest.crc64nvme}
            if f.sha256:
                metadata[META_SHA256] = f.sha256
            resumed = self._resume(f, path, key, lambda n: count("upload", n))
            if not resumed:
                transfers.upload(path, bucket, key, metadata, lambda n: count("upload", n))
        state = self.dest.head(key)
        check_uploaded(f, state, digest, f"s3://{bucket}/{key}")
        if resumed and any(state.metadata.get(k) != v for k, v in metadata.items()):
            # Started for other bytes of this file (changed since): same bytes now, other
            # metadata. The next attempt uploads it anew.
            raise IntegrityError(
                f"s3://{bucket}/{key}: the resumed upload carries the metadata of an earlier "
                "version of the file"
            )
        return _entry(f, state, source_id)

    def _resume(self, f: SourceFile, path: Path, key: str, on_bytes) -> bool:
        """Finish the incomplete upload an interrupted run left for `key`, if any: True when
        done, False when there is none to finish (or S3 no longer knows it)."""
        upload = self.resumable.get(key)
        if upload is None:
            return False
        sent = 0

        def counted(n: int) -> None:
            nonlocal sent
            sent += n
            on_bytes(n)

        try:
            resumed = resume_upload(
                self.dest.client,
                path,
                self.dest.location.bucket,
                key,
                upload.upload_id,
                part_size=self.options.part_size,
                concurrency=self.options.concurrency,
                on_bytes=counted,
            )
        except TransferError:
            raise  # kept for the next attempt: its parts sent so far stay
        except BaseException:
            self.resumable.pop(key, None)
            raise
        self.resumable.pop(key, None)  # completed, or gone
        if resumed is None:
            on_bytes(-sent)  # counted again by the upload anew
            return False
        self.log(
            f"resumed the upload of {f.path}: {resumed.reused} of {resumed.parts} parts were "
            "already in S3 and verified"
        )
        return True

    def _copy(self, f: SourceFile, transfers: Transfers, on_bytes) -> ManifestFile:
        source: S3Source = self.source  # type: ignore[assignment]
        bucket, key = self.dest.location.bucket, self.dest.location.key(f.path)
        source_uri = f"s3://{source.bucket}/{f.location}"
        try:
            published = source.published_crc64nvme(f)
        except Exception as exc:
            raise s3_error(exc, "read", source_uri) from None
        metadata = {META_SOURCE_ID: f.source_id or ""}
        if published:
            metadata[META_CRC64NVME] = published
        if f.sha256:
            metadata[META_SHA256] = f.sha256
        transfers.copy(source.client, source.bucket, f.location, bucket, key, metadata, on_bytes)
        state = self.dest.head(key)
        check_copied(f, state, published, f"s3://{bucket}/{key}", source_uri)
        return _entry(f, state, f.source_id or "")


def _entry(f: SourceFile, state: ObjectState, source_id: str) -> ManifestFile:
    """The manifest entry of the object just written and verified."""
    return ManifestFile(
        path=f.path,
        size=f.size,
        crc64nvme=state.crc64nvme,
        source_id=source_id,
        sha256=f.sha256,
        version_id=state.version_id,
    )
