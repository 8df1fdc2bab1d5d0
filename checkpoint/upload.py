"""Stage a checkpoint in S3: verified, resumable, idempotent; the manifest written last.

1. Check the destination bucket exists and is in the cluster's Region (--region).
2. List the source (sizes, published checksums) and HEAD every destination object: an object is
   kept when its size, its S3 CRC64NVME and its recorded source identity all match. A local
   file's CRC64NVME comes from the checksum cache when the file is unchanged since it was last
   hashed (same size, mtime, ctime, inode; see checksum_cache.py), else from reading it. Only
   files with an object of the same size to compare against are hashed here; the others are
   hashed right before their upload, so a first upload of a large local checkpoint starts at
   once and reads each file from disk once (the upload's read finds it in the page cache).
3. If anything must change, delete the manifest first, so that no reader ever sees a manifest
   describing objects being rewritten.
4. Transfer what is missing or wrong, concurrently. A file from the Hub is downloaded to a temp
   directory (within the local disk budget), checked against its published SHA-256 or git blob
   id, uploaded and deleted. After each upload the object's size and CRC64NVME are read back
   and compared with the bytes read locally; a mismatch is retried.
5. Only when every object is verified: write the manifest (a rerun that found everything in
   place writes nothing at all).

An interrupted run (kill -9, a node going away) leaves verified objects in place and no
manifest; the next run transfers only what is missing or wrong.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import boto3

from checkpoint.checksum_cache import CacheStats, ChecksumCache
from checkpoint.errors import (
    CheckpointError,
    DestinationError,
    DiskFullError,
    IntegrityError,
    ManifestError,
    SourceError,
    TransferError,
    UsageError,
)
from checkpoint.hashing import Digests, digest_file
from checkpoint.manifest import (
    Manifest,
    ManifestFile,
    delete_manifest,
    manifest_key,
    read_manifest,
    write_manifest,
)
from checkpoint.progress import Progress, human_bytes
from checkpoint.s3dest import (
    MAX_PART_SIZE,
    META_CRC64NVME,
    META_SHA256,
    META_SOURCE_ID,
    MIN_PART_SIZE,
    Destination,
    ObjectState,
    S3Location,
    Transfers,
    bucket_region,
    default_session,
    make_client,
    parse_s3_uri,
    s3_error,
)
from checkpoint.sources import (
    SOURCE_FORMS,
    FileSource,
    HfSource,
    LocalSource,
    S3Source,
    Source,
    SourceFile,
    parse_hf_uri,
    select_files,
)

Log = Callable[[str], None]
MAX_CONCURRENCY = 256
# How often the checksum cache is written while files finish uploading (it is also written
# before the transfers and after them, failed or not): one small JSON file per interval at most.
CACHE_SAVE_SECONDS = 10.0


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class UploadOptions:
    region: str | None = None  # the cluster's Region: the bucket must be in it
    endpoint_url: str | None = None
    concurrency: int = 16
    part_size: int = 16 * 2**20
    transfer_client: str = "auto"  # auto | crt | classic
    max_bandwidth: int | None = None  # bytes/s (classic client)
    tmp_dir: Path | None = None  # where Hub files are staged one by one
    tmp_limit: int | None = None  # at most this many bytes staged at once
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    delete_extra: bool = False
    dry_run: bool = False
    progress: str = "auto"  # auto | tty | plain | none
    progress_interval: float = 15.0
    file_attempts: int = 3
    checksum_cache: bool = True  # remember local files' checksums between runs (see above)

    def validate(self) -> None:
        if not 1 <= self.concurrency <= MAX_CONCURRENCY:
            raise UsageError(
                f"--concurrency {self.concurrency}: use 1 to {MAX_CONCURRENCY} parallel requests"
            )
        if not MIN_PART_SIZE <= self.part_size <= MAX_PART_SIZE:
            raise UsageError(
                f"--part-size {self.part_size} bytes: S3 parts must be 5 MiB to 5 GiB (e.g. 16MiB)"
            )
        if self.max_bandwidth is not None and self.max_bandwidth <= 0:
            raise UsageError("--max-bandwidth must be a positive size per second, e.g. 100MiB")
        if self.tmp_dir is not None and not self.tmp_dir.is_dir():
            raise UsageError(f"--tmp-dir {self.tmp_dir}: no such directory; create it first")


@dataclass
class UploadResult:
    source: str
    revision: str | None
    dest: str
    manifest_key: str
    manifest_uri: str
    manifest: Manifest | None  # None for a dry run that would change something
    transferred: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    bytes_transferred: int = 0
    extras: list[str] = field(default_factory=list)  # keys under the prefix not in the checkpoint
    extras_deleted: bool = False
    manifest_written: bool = False
    aborted_uploads: int = 0
    transfer_client: str = ""
    peak_tmp_bytes: int = 0
    seconds: float = 0.0
    checksum_cache: CacheStats | None = None  # local sources: files hashed or taken from cache

    def summary(self) -> str:
        verb = "would transfer" if self.manifest is None else "transferred"
        lines = [
            f"{self.source}"
            + (f"@{self.revision}" if self.revision else "")
            + f" -> {self.dest}: {verb} {len(self.transferred)} files "
            f"({human_bytes(self.bytes_transferred)}), kept {len(self.kept)} verified "
            f"in {self.seconds:.1f}s"
        ]
        if self.manifest is not None:
            state = "written" if self.manifest_written else "unchanged"
            lines.append(
                f"manifest {self.manifest_uri} {state}: {len(self.manifest.files)} files, "
                f"{human_bytes(self.manifest.total_bytes)}"
            )
        return "\n".join(lines)


def open_source(
    uri: str, revision: str | None, session: boto3.session.Session, options: UploadOptions
) -> Source:
    """`hf://org/model`, `s3://bucket/prefix` or a local directory -> its Source."""
    if uri.startswith("hf://"):
        return HfSource(
            parse_hf_uri(uri),
            revision,
            token=os.environ.get("HF_TOKEN"),
            endpoint=os.environ.get("HF_ENDPOINT"),
        )
    if uri.startswith("s3://"):
        location = parse_s3_uri(uri, "--source")
        probe = make_client(
            session, options.region or session.region_name or "us-east-1", options.endpoint_url, 4
        )
        region = bucket_region(probe, location.bucket, "--source")
        client = make_client(session, region, options.endpoint_url, options.concurrency)
        return S3Source(client, location.bucket, location.prefix, revision)
    if "://" in uri:
        raise UsageError(f"--source {uri!r}: unknown scheme; use {SOURCE_FORMS}")
    return LocalSource(uri, revision)


class DiskBudget:
    """Bytes of local disk the staged Hub files may take at once; waits for room, never more."""

    def __init__(self, directory: Path, limit: int | None):
        free = shutil.disk_usage(directory).free
        headroom = min(free // 20, 2**30)
        room = max(free - headroom, 0)
        self.directory = directory
        self.capacity = min(limit, room) if limit else room
        self.why = (
            f"--tmp-limit {human_bytes(limit)}"
            if limit and limit <= room
            else f"{human_bytes(free)} free in --tmp-dir {directory}"
        )
        self.used = 0
        self.peak = 0
        self._cond = threading.Condition()

    def check(self, f: SourceFile) -> None:
        if f.size > self.capacity:
            raise DiskFullError(
                f"{f.path} is {human_bytes(f.size)}, more than the {human_bytes(self.capacity)} "
                f"of local disk this upload may use ({self.why}): point --tmp-dir at a volume "
                f"with at least {human_bytes(f.size)} free, or raise --tmp-limit"
            )

    @contextlib.contextmanager
    def reserve(self, f: SourceFile, stop: threading.Event) -> Iterator[None]:
        self.check(f)
        with self._cond:
            while self.used + f.size > self.capacity:
                if stop.is_set():
                    raise _Stopped()
                self._cond.wait(0.5)
            self.used += f.size
            self.peak = max(self.peak, self.used)
        try:
            yield
        finally:
            with self._cond:
                self.used -= f.size
                self._cond.notify_all()


class _Stopped(Exception):
    """Another file failed for good: do not start this one."""


@dataclass
class _Plan:
    keep: dict[str, ManifestFile]
    todo: list[SourceFile]
    digests: dict[str, Digests]  # local files hashed while planning


def upload_checkpoint(
    source: str | Source,
    dest: str,
    *,
    revision: str | None = None,
    options: UploadOptions | None = None,
    session: boto3.session.Session | None = None,
    log: Log = _stderr,
) -> UploadResult:
    """Stage `source` under the S3 prefix `dest`; see the module docstring."""
    options = options or UploadOptions()
    options.validate()
    started = time.monotonic()
    location = parse_s3_uri(dest, "--dest")
    session = session or default_session()
    probe_region = options.region or session.region_name or "us-east-1"
    probe = make_client(session, probe_region, options.endpoint_url, options.concurrency)
    region = bucket_region(probe, location.bucket, "--dest")
    if not options.region:
        log(f"note: --region not given: bucket {location.bucket} is in {region}, not checked")
    elif region != options.region:
        raise DestinationError(
            f"bucket {location.bucket} is in {region}, the cluster in {options.region}: a "
            f"checkpoint must be in the cluster's Region (cross-Region loads are slow and billed); "
            f"use a bucket in {options.region} for --dest, or fix --region"
        )
    # The bucket is where the probe was pointed (--region given and right): one client for all.
    client = (
        probe
        if region == probe_region
        else make_client(session, region, options.endpoint_url, options.concurrency)
    )
    if isinstance(source, str):
        source = open_source(source, revision, session, options)
    destination = Destination(client, location)
    return _Upload(source, destination, options, session, region, log, started).run()


class _Upload:
    def __init__(self, source, destination, options, session, region, log, started):
        self.source: Source = source
        self.dest: Destination = destination
        self.options: UploadOptions = options
        self.session = session
        self.region = region
        self.log = log
        self.started = started
        self.stop = threading.Event()
        # Hashing keeps a core busy: no more files hashed at once than there are cores (more
        # only thrash the CPU caches and the GIL), while planning and while uploading alike.
        self._hashing = threading.BoundedSemaphore(max(1, os.cpu_count() or 1))
        self._cache_saved_at = time.monotonic()
        self._cache_save_lock = threading.Lock()
        self.progress: Progress | None = None
        self.cache: ChecksumCache | None = None
        if isinstance(source, LocalSource):
            self.cache = ChecksumCache.for_source(
                source.root, enabled=options.checksum_cache, log=log
            )

    @property
    def location(self) -> S3Location:
        return self.dest.location

    def run(self) -> UploadResult:
        opts, loc = self.options, self.location
        files = select_files(self.source.list_files(), opts.include, opts.exclude)
        if not files:
            raise SourceError(
                f"no files to stage from {self.source.uri}"
                + (
                    " with these --include/--exclude patterns"
                    if opts.include or opts.exclude
                    else ""
                )
            )
        result = UploadResult(
            source=self.source.uri,
            revision=self.source.revision,
            dest=loc.uri,
            manifest_key=manifest_key(loc.prefix),
            manifest_uri=f"s3://{loc.bucket}/{manifest_key(loc.prefix)}",
            manifest=None,
            checksum_cache=self.cache.stats if self.cache else None,
        )

        def load_manifest() -> Manifest | None:
            try:
                return read_manifest(self.dest.client, loc.bucket, loc.prefix)
            except ManifestError as exc:
                self.log(f"note: {exc}; it will be replaced")
                return None
            except Exception as exc:
                raise s3_error(exc, "read the manifest under", loc.uri) from None

        # Requests that do not depend on one another go at once (a rerun with everything in
        # place is nothing but these): the manifest, the listing of the prefix, the incomplete
        # uploads of an earlier run (aborted; nothing is written before they are gone), and
        # the plan's HEAD of every object.
        with ThreadPoolExecutor(3, thread_name_prefix="survey") as side:
            reading = side.submit(load_manifest)
            listing = side.submit(self.dest.list_keys)
            aborting = None if opts.dry_run else side.submit(self.dest.abort_incomplete_uploads)
            plan = self._plan(files, reading.result)
            existing = reading.result()
            listed = listing.result()
            if aborting is not None:
                result.aborted_uploads = aborting.result()
        if result.aborted_uploads:
            self.log(f"aborted {result.aborted_uploads} incomplete uploads of an earlier run")
        if self.cache is not None:
            self.cache.save()  # before transferring: an interrupted run keeps its hashes
        result.kept = sorted(plan.keep)
        result.transferred = [f.path for f in plan.todo]
        result.bytes_transferred = sum(f.size for f in plan.todo)
        wanted = {loc.key(f.path) for f in files} | {result.manifest_key}
        result.extras = sorted(k for k in listed if k not in wanted)
        if opts.dry_run:
            if not plan.todo and existing is not None:
                result.manifest = existing
            result.seconds = time.monotonic() - self.started
            return result

        if plan.todo:
            if isinstance(self.source, LocalSource):
                _check_readable(plan.todo)  # before the manifest goes, not after
            if existing is not None:
                self.log(f"{len(plan.todo)} files to transfer: deleting the manifest until done")
                try:
                    delete_manifest(self.dest.client, loc.bucket, loc.prefix)
                except Exception as exc:
                    raise s3_error(exc, "delete the manifest under", loc.uri) from None
                existing = None
            try:
                done = self._transfer(plan, result)
            finally:  # files hashed for their upload or re-read by a retry, even if it failed
                if self.cache is not None:
                    self.cache.save()
        else:
            done = {}
        if result.extras:
            if opts.delete_extra:
                self.dest.delete_keys(result.extras)
                result.extras_deleted = True
                self.log(f"deleted {len(result.extras)} objects not part of this checkpoint")
            else:
                sample = ", ".join(result.extras[:5]) + (", ..." if len(result.extras) > 5 else "")
                self.log(
                    f"warning: {len(result.extras)} objects under {loc.uri} are not part of this "
                    f"checkpoint ({sample}); readers go by the manifest, but a loader listing the "
                    "prefix would see them: rerun with --delete-extra to remove them"
                )
        manifest = Manifest(
            source=self.source.uri,
            revision=self.source.revision,
            files=tuple(sorted({**plan.keep, **done}.values(), key=lambda f: f.path)),
            include=opts.include,
            exclude=opts.exclude,
        )
        if existing is not None and existing.same_checkpoint(manifest):
            result.manifest = existing
        else:
            try:
                write_manifest(self.dest.client, loc.bucket, loc.prefix, manifest)
            except Exception as exc:
                raise s3_error(exc, "write the manifest under", loc.uri) from None
            result.manifest = manifest
            result.manifest_written = True
        result.seconds = time.monotonic() - self.started
        return result

    # -- planning -----------------------------------------------------------------------------
    def _plan(self, files: list[SourceFile], manifest: Callable[[], Manifest | None]) -> _Plan:
        """`manifest`: the existing manifest, asked for once the HEADs are done (it is read
        meanwhile)."""
        hashing = isinstance(self.source, LocalSource)
        progress = (
            Progress(
                {"check": sum(f.size for f in files)},
                files=len(files),
                mode=self.options.progress,
                interval=self.options.progress_interval,
            )
            if hashing
            else None
        )
        keep: dict[str, ManifestFile] = {}
        todo: list[SourceFile] = []
        digests: dict[str, Digests] = {}

        workers = min(len(files), self.options.concurrency, 32)  # HEADs wait on the network

        def check(f: SourceFile) -> tuple[SourceFile, ObjectState | None, Digests | None]:
            state = self.dest.head(self.location.key(f.path))
            digest = None
            if progress is not None:
                if _may_hold(f, state):
                    with self._hashing:
                        digest = _digest_local(
                            f, Path(f.location), self.cache, lambda n: progress.add("check", n)
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
        return _Plan(keep=keep, todo=todo, digests=digests)

    # -- transfers ----------------------------------------------------------------------------
    def _transfer(self, plan: _Plan, result: UploadResult) -> dict[str, ManifestFile]:
        opts, loc = self.options, self.location
        staging = isinstance(self.source, FileSource) and self.source.stages
        budget = None
        workdir = None
        if staging:
            # Fail before downloading anything: a file that can never fit, no access to the
            # model (gated), no permission to write the bucket.
            workdir = Path(tempfile.mkdtemp(prefix="hyperpod-dpd-", dir=opts.tmp_dir))
            try:
                budget = DiskBudget(workdir, opts.tmp_limit)
                for f in plan.todo:
                    budget.check(f)
                if isinstance(self.source, HfSource):
                    self.source.check_access(plan.todo[0])
                self.dest.probe_write(loc.key(plan.todo[0].path))
            except BaseException:
                shutil.rmtree(workdir, ignore_errors=True)
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
                    except _Stopped:
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
            if workdir is not None:
                shutil.rmtree(workdir, ignore_errors=True)
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
        except _Stopped:
            raise
        except BaseException:
            self.stop.set()  # start no other file; those in flight finish and stay
            raise

    def _attempts(self, f, transfers, digest, budget, workdir) -> ManifestFile:
        attempts = self.options.file_attempts
        for attempt in range(1, attempts + 1):
            if self.stop.is_set():
                raise _Stopped()
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
                time.sleep(0.25 * 2 ** (attempt - 1))
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
        key = self.location.key(f.path)
        source: FileSource = self.source  # type: ignore[assignment]
        reserve = budget.reserve(f, self.stop) if budget else contextlib.nullcontext()
        with reserve, source.fetch(f, workdir, lambda n: count("download", n)) as path:
            try:
                size = path.stat().st_size
            except OSError as exc:
                raise _unreadable(_where(f, path), exc) from None
            if size != f.size:
                raise IntegrityError(
                    f"{f.path} is {size} bytes, the source lists {f.size}: "
                    + ("the download was truncated" if source.stages else "it changed while staged")
                )
            if digest is None:  # a retry reads the bytes again whatever the cache says
                with self._hashing:
                    digest = _digest_local(f, path, self.cache, refresh=attempt > 1)
            _check_published(f, digest)
            source_id = f.source_id or f"crc64nvme:{digest.crc64nvme}"
            metadata = {META_SOURCE_ID: source_id, META_CRC64NVME: digest.crc64nvme}
            if f.sha256:
                metadata[META_SHA256] = f.sha256
            transfers.upload(
                path, self.location.bucket, key, metadata, lambda n: count("upload", n)
            )
        state = self.dest.head(key)
        if state is None or state.size != f.size or state.crc64nvme != digest.crc64nvme:
            found = (
                "no object"
                if state is None
                else f"{state.size} bytes with CRC64NVME {state.crc64nvme}"
            )
            raise IntegrityError(
                f"s3://{self.location.bucket}/{key} holds {found} after the upload, expected "
                f"{f.size} bytes with CRC64NVME {digest.crc64nvme}"
            )
        return ManifestFile(
            path=f.path,
            size=f.size,
            crc64nvme=state.crc64nvme,
            source_id=source_id,
            sha256=f.sha256,
            version_id=state.version_id,
        )

    def _copy(self, f: SourceFile, transfers: Transfers, on_bytes) -> ManifestFile:
        source: S3Source = self.source  # type: ignore[assignment]
        key = self.location.key(f.path)
        try:
            published = source.published_crc64nvme(f)
        except Exception as exc:
            raise s3_error(exc, "read", f"s3://{source.bucket}/{f.location}") from None
        metadata = {META_SOURCE_ID: f.source_id or ""}
        if published:
            metadata[META_CRC64NVME] = published
        if f.sha256:
            metadata[META_SHA256] = f.sha256
        transfers.copy(
            source.client, source.bucket, f.location, self.location.bucket, key, metadata, on_bytes
        )
        state = self.dest.head(key)
        if (
            state is None
            or state.size != f.size
            or state.crc64nvme is None
            or (published and state.crc64nvme != published)
        ):
            raise IntegrityError(
                f"s3://{self.location.bucket}/{key} does not match s3://{source.bucket}/"
                f"{f.location} after the copy (size or CRC64NVME)"
            )
        return ManifestFile(
            path=f.path,
            size=f.size,
            crc64nvme=state.crc64nvme,
            source_id=f.source_id or "",
            sha256=f.sha256,
            version_id=state.version_id,
        )


def _digest_local(
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


def _check_readable(files: list[SourceFile]) -> None:
    """Open each local file once (no read): a missing or unreadable file is an error before
    anything in the bucket changes. Most are first read when uploaded, after that."""
    for f in files:
        try:
            os.close(os.open(f.location, os.O_RDONLY))
        except OSError as exc:
            raise _unreadable(f.location, exc) from None


def _unreadable(where: str, exc: OSError) -> SourceError:
    return SourceError(f"cannot read {where}: {exc.strerror or exc}")


def _where(f: SourceFile, path: Path) -> str:
    """The file for a message: its own path, or the source's name for a downloaded copy."""
    return str(path) if str(path) == f.location else f"{f.path} (downloaded to {path})"


def _check_published(f: SourceFile, digest: Digests) -> None:
    if f.sha256 and digest.sha256 != f.sha256:
        raise IntegrityError(
            f"{f.path}: SHA-256 {digest.sha256} does not match the {f.sha256} the source publishes"
        )
    if f.git_sha1 and digest.git_sha1 != f.git_sha1:
        raise IntegrityError(
            f"{f.path}: git blob id {digest.git_sha1} does not match the {f.git_sha1} the source "
            "publishes"
        )


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
