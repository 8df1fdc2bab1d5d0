"""Stage a checkpoint in S3: verified, resumable, idempotent; the manifest written last.

1. Check the destination bucket exists and is in the cluster's Region (--region).
2. List the source (sizes, published checksums) and HEAD every destination object: an object is
   kept when its size, its S3 CRC64NVME and its recorded source identity all match. A local
   file's CRC64NVME comes from the checksum cache when the file is unchanged since it was last
   hashed (same size, mtime, ctime, inode; see checkpoint/checksum_cache.py), else from reading it. Only
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
manifest; the next run transfers only what is missing or wrong. The multipart uploads it left
are finished by the next run when they are of files still to send (their parts kept only when
verified against the file's bytes: checkpoint/s3/resume.py) and aborted otherwise; one S3 no
longer knows (completed or aborted meanwhile) is gone, not an error. Nothing else it left (a
checksum cache cut short, temp files, a staging directory) stops or misleads the next run.

Here: the steps in order and the manifest (1, 3, 5). planner.py decides what to transfer (2),
executor.py transfers it (4) with the checks of checks.py.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import boto3

from checkpoint.checksum_cache import ChecksumCache
from checkpoint.errors import DestinationError, ManifestError, SourceError, UsageError
from checkpoint.manifest import (
    Manifest,
    delete_manifest,
    manifest_key,
    read_manifest,
    write_manifest,
)
from checkpoint.s3.client import (
    bucket_client,
    bucket_region,
    default_session,
    make_client,
    probe_region,
)
from checkpoint.s3.destination import Destination, IncompleteUpload
from checkpoint.s3.errors import s3_error
from checkpoint.s3.resume import pick_resumable
from checkpoint.s3.uri import parse_s3_uri
from checkpoint.sources.base import SOURCE_FORMS, Source, select_files
from checkpoint.sources.hf import HfSource, hub_token, parse_hf_uri
from checkpoint.sources.local import LocalSource
from checkpoint.sources.s3 import S3Source
from checkpoint.upload.checks import check_readable
from checkpoint.upload.executor import Executor
from checkpoint.upload.options import UploadOptions
from checkpoint.upload.planner import Plan, plan_upload
from checkpoint.upload.result import UploadResult

Log = Callable[[str], None]


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def open_source(
    uri: str, revision: str | None, session: boto3.session.Session | None, options: UploadOptions
) -> Source:
    """`hf://org/model`, `s3://bucket/prefix` or a local directory -> its Source (only an
    s3:// source needs the session)."""
    if uri.startswith("hf://"):
        return HfSource(
            parse_hf_uri(uri),
            revision,
            token=hub_token(),
            endpoint=os.environ.get("HF_ENDPOINT"),
        )
    if uri.startswith("s3://"):
        location = parse_s3_uri(uri, "--source")
        client = bucket_client(
            session,
            location.bucket,
            "--source",
            region=options.region,
            endpoint_url=options.endpoint_url,
            concurrency=options.concurrency,
        )
        return S3Source(client, location.bucket, location.prefix, revision)
    if "://" in uri:
        raise UsageError(f"--source {uri!r}: unknown scheme; use {SOURCE_FORMS}")
    return LocalSource(uri, revision)


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
    # What the source is, before any credentials or S3 call: a wrong --source or --revision is
    # named as such, not hidden behind a credentials or bucket error.
    if isinstance(source, str) and not source.startswith("s3://"):
        source = open_source(source, revision, None, options)
    elif isinstance(source, str):
        parse_s3_uri(source, "--source")
    session = session or default_session()
    pointed = probe_region(session, options.region)
    probe = make_client(session, pointed, options.endpoint_url, options.concurrency)
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
        if region == pointed
        else make_client(session, region, options.endpoint_url, options.concurrency)
    )
    if isinstance(source, str):
        source = open_source(source, revision, session, options)
    destination = Destination(client, location)
    return _Upload(source, destination, options, session, region, log, started).run()


class _Upload:
    """One run of upload_checkpoint(): the steps in order, around the plan and its transfer."""

    def __init__(self, source, destination, options, session, region, log, started):
        self.source: Source = source
        self.dest: Destination = destination
        self.options: UploadOptions = options
        self.log = log
        self.started = started
        # Hashing keeps a core busy: no more files hashed at once than there are cores (more
        # only thrash the CPU caches and the GIL), while planning and while uploading alike.
        self._hashing = threading.BoundedSemaphore(max(1, os.cpu_count() or 1))
        self.cache: ChecksumCache | None = None
        if isinstance(source, LocalSource):
            self.cache = ChecksumCache.for_source(
                source.root, enabled=options.checksum_cache, log=log
            )
        self.executor = Executor(
            source, destination, options, session, region, log, self.cache, self._hashing
        )

    def _resume_or_abort(self, uploads: list[IncompleteUpload], plan: Plan) -> int:
        """Hand the executor the incomplete uploads of an earlier run it can finish (files to
        upload again, not copy); abort the others. How many were aborted."""
        keys = set()
        if not isinstance(self.source, S3Source):
            keys = {self.dest.location.key(f.path) for f in plan.todo}
        self.executor.resumable, stale = pick_resumable(uploads, keys)
        return self.dest.abort_incomplete_uploads(stale)

    def run(self) -> UploadResult:
        opts, loc = self.options, self.dest.location
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
        # uploads of an earlier run (resumed or aborted; nothing is written before those to
        # abort are gone), and the plan's HEAD of every object.
        with ThreadPoolExecutor(3, thread_name_prefix="survey") as side:
            reading = side.submit(load_manifest)
            listing = side.submit(self.dest.list_keys)
            incomplete = None if opts.dry_run else side.submit(self.dest.incomplete_uploads)
            plan = plan_upload(
                files,
                reading.result,
                self.dest,
                opts,
                local=isinstance(self.source, LocalSource),
                cache=self.cache,
                hashing=self._hashing,
            )
            existing = reading.result()
            listed = listing.result()
            if incomplete is not None:
                result.aborted_uploads = self._resume_or_abort(incomplete.result(), plan)
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
                check_readable(plan.todo)  # before the manifest goes, not after
            if existing is not None:
                self.log(f"{len(plan.todo)} files to transfer: deleting the manifest until done")
                try:
                    delete_manifest(self.dest.client, loc.bucket, loc.prefix)
                except Exception as exc:
                    raise s3_error(exc, "delete the manifest under", loc.uri) from None
                existing = None
            try:
                done = self.executor.transfer(plan, result)
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
