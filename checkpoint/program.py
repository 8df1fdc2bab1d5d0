"""Command line of checkpoint staging, shared by `hyperpod-dpd checkpoint ...` and the in-cluster
Job's `python -m checkpoint ...`.

  upload --source hf://ORG/NAME|s3://BUCKET/PREFIX|DIR --dest s3://BUCKET/PREFIX
         [--revision SHA] [--region R] [--endpoint-url URL] [--concurrency N] ...
  verify --dest s3://BUCKET/PREFIX [--region R] [--endpoint-url URL] [--deep]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from checkpoint.errors import CheckpointError
from checkpoint.progress import MODES
from checkpoint.upload.options import CACHE_ENV, TRANSFER_CLIENTS, UploadOptions
from core import cli_inputs as inputs
from core.cli_help import described
from core.exits import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    tolerant_streams,
    unhandled,
)
from core.json_output import dumps
from core.units import parse_byte_size


def _size(value: str) -> int:
    try:
        return parse_byte_size(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{value!r}: {exc}") from None


def _positive_int(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{value!r}: must be at least 1")
    return n


def _s3_location(parser: argparse.ArgumentParser, dest_help: str, region_help: str) -> None:
    """Where a command's checkpoint is in S3: --dest, --region and --endpoint-url."""
    parser.add_argument("--dest", required=True, help=dest_help)
    parser.add_argument("--region", type=inputs.aws_region, help=region_help)
    parser.add_argument(
        "--endpoint-url", type=inputs.http_url, help="S3 endpoint (S3-compatible stores, tests)"
    )


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    """Add `upload` and `verify`; each sets handler=<fn(args, project_dir) -> exit code>."""
    up = subparsers.add_parser(
        "upload",
        help="stage a checkpoint in S3 (resumable, verified, manifest last)",
        description="Copy a model checkpoint to s3://BUCKET/PREFIX. Reruns transfer only what "
        "is missing or wrong; the manifest object is written last and means 'complete'.",
    )
    described(
        up,
        ["hyperpod-dpd checkpoint upload --source hf://meta-llama/Llama-3.3-70B-Instruct "
         "--revision 6f6073b423013f6a7d4d9f39144961bfbfbc386b --dest s3://my-bucket/models/llama",
         "hyperpod-dpd checkpoint upload --source ./llama --dest s3://my-bucket/models/llama "
         "--dry-run --format json"],
        {0: "staged (or, --dry-run, told)",
         1: "a transfer failed: rerun the same command to resume",
         2: "bad input: a flag, a source or destination out of reach, named"},
    )  # fmt: skip
    up.add_argument(
        "--source",
        required=True,
        help="hf://ORG/NAME (token: HF_TOKEN; endpoint: HF_ENDPOINT), s3://BUCKET/PREFIX "
        "(copied server-side) or a local directory",
    )
    _s3_location(
        up,
        "s3://BUCKET/PREFIX in the cluster's Region",
        "the cluster's Region: refuse a destination bucket elsewhere (default: no check)",
    )
    up.add_argument(
        "--revision", help="commit SHA (40 hex) of an hf:// model; a free label for other sources"
    )
    up.add_argument(
        "--concurrency", type=_positive_int, default=16, help="parallel S3 requests (default 16)"
    )
    up.add_argument(
        "--part-size", type=_size, default=16 * 2**20, help="multipart part size (default 16MiB)"
    )
    up.add_argument(
        "--transfer-client",
        choices=TRANSFER_CLIENTS,
        default="auto",
        help="auto (default): the CRT client (awscrt) for AWS's own S3 endpoints, the classic "
        "s3transfer client for any other --endpoint-url: the CRT client sends every body "
        "aws-chunked with a trailing checksum and an unsigned payload, even over plain http, "
        "which S3-compatible stores decode slowly, mishandle or refuse (classic also when awscrt "
        "is unusable). crt|classic: that client",
    )
    up.add_argument(
        "--max-bandwidth", type=_size, help="upload at most this many bytes/s (classic client)"
    )
    up.add_argument(
        "--tmp-dir",
        type=inputs.output_dir,
        help="where hf:// files are staged one by one (default: TMPDIR)",
    )
    up.add_argument(
        "--tmp-limit",
        type=_size,
        help="local disk hf:// staging may use at once, e.g. the Job's emptyDir sizeLimit",
    )
    up.add_argument("--include", action="append", default=[], help="only paths matching (glob)")
    up.add_argument("--exclude", action="append", default=[], help="leave out paths (glob)")
    up.add_argument(
        "--delete-extra",
        action="store_true",
        help="delete objects under the prefix that are not part of this checkpoint",
    )
    up.add_argument("--dry-run", action="store_true", help="only tell what would be transferred")
    up.add_argument(
        "--no-checksum-cache",
        dest="checksum_cache",
        action="store_false",
        help="read and hash every local file even if unchanged (same size, mtime, ctime, inode) "
        "since the last run; the cache: ${XDG_CACHE_HOME:-~/.cache}/hyperpod-dpd/checksums, or "
        f"${CACHE_ENV} if set ({CACHE_ENV}=off: no cache either)",
    )
    _common_output(up)
    up.set_defaults(handler=run_upload, project_dir=None)

    ver = subparsers.add_parser(
        "verify",
        help="check a staged checkpoint against its manifest",
        description="Check a staged checkpoint against its manifest: every object there with "
        "its size (--deep: its checksum, downloaded again).",
    )
    described(
        ver,
        ["hyperpod-dpd checkpoint verify --dest s3://my-bucket/models/llama",
         "hyperpod-dpd checkpoint verify --dest s3://my-bucket/models/llama --deep --format json"],
        {0: "every object of the manifest is there, as recorded",
         1: "an object is missing or differs, or there is no manifest (named)",
         2: "bad input, named"},
    )  # fmt: skip
    _s3_location(
        ver,
        "s3://BUCKET/PREFIX of the checkpoint",
        "only for the first request (the bucket's Region is used)",
    )
    ver.add_argument(
        "--deep", action="store_true", help="also download every object and recompute checksums"
    )
    ver.add_argument(
        "--concurrency", type=_positive_int, default=16, help="parallel S3 requests (default 16)"
    )
    _format(ver)
    ver.set_defaults(handler=run_verify, project_dir=None)


def _common_output(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--progress",
        choices=MODES,
        default="auto",
        help="progress on stderr: a live line on a terminal, plain lines otherwise",
    )
    p.add_argument(
        "--progress-interval",
        type=inputs.finite_float,
        default=15.0,
        help="seconds between plain progress lines (default 15)",
    )
    _format(p)


def _format(p: argparse.ArgumentParser) -> None:
    """--format text|json, as every hyperpod-dpd command takes it; --json, its older spelling,
    still works (a note on stderr says so) but is no longer listed."""
    p.add_argument(
        "--format", choices=["text", "json"], default="text", help="output format (stdout)"
    )
    p.add_argument("--json", dest="format", action="store_const", const="json-deprecated",
                   help=argparse.SUPPRESS)  # fmt: skip


def _json_output(args: argparse.Namespace) -> bool:
    if args.format == "json-deprecated":
        print("note: --json is deprecated: use --format json", file=sys.stderr)
        args.format = "json"
    return args.format == "json"


def run_upload(args: argparse.Namespace, project_dir: Path | None = None) -> int:
    as_json = _json_output(args)
    options = UploadOptions(
        region=args.region,
        endpoint_url=args.endpoint_url,
        concurrency=args.concurrency,
        part_size=args.part_size,
        transfer_client=args.transfer_client,
        max_bandwidth=args.max_bandwidth,
        tmp_dir=args.tmp_dir,
        tmp_limit=args.tmp_limit,
        include=tuple(args.include),
        exclude=tuple(args.exclude),
        delete_extra=args.delete_extra,
        dry_run=args.dry_run,
        progress=args.progress,
        progress_interval=args.progress_interval,
        checksum_cache=args.checksum_cache,
    )
    try:
        from checkpoint.upload.run import upload_checkpoint  # boto3 and the Hub: only to run

        result = upload_checkpoint(args.source, args.dest, revision=args.revision, options=options)
    except CheckpointError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(
            "interrupted: objects already verified stay, no manifest was written; rerun the same "
            "command to resume",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    if as_json:
        print(
            dumps(
                {
                    "source": result.source,
                    "revision": result.revision,
                    "dest": result.dest,
                    "manifest": result.manifest_uri if result.manifest else None,
                    "manifestWritten": result.manifest_written,
                    "transferred": result.transferred,
                    "kept": result.kept,
                    "bytesTransferred": result.bytes_transferred,
                    "extras": result.extras,
                    "extrasDeleted": result.extras_deleted,
                    "abortedUploads": result.aborted_uploads,
                    "transferClient": result.transfer_client or None,
                    "checksumCache": (
                        result.checksum_cache.to_json() if result.checksum_cache else None
                    ),
                    "seconds": round(result.seconds, 3),
                    "dryRun": args.dry_run,
                },
                indent=2,
            )
        )
    else:
        print(result.summary())
    return EXIT_OK


def run_verify(args: argparse.Namespace, project_dir: Path | None = None) -> int:
    as_json = _json_output(args)
    try:
        from checkpoint.verify import verify_checkpoint

        report = verify_checkpoint(
            args.dest,
            endpoint_url=args.endpoint_url,
            region=args.region,
            deep=args.deep,
            concurrency=args.concurrency,
        )
    except CheckpointError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    if as_json:
        print(
            dumps(
                {
                    "dest": report.dest,
                    "ok": report.ok,
                    "source": report.manifest.source,
                    "revision": report.manifest.revision,
                    "files": len(report.manifest.files),
                    "totalBytes": report.manifest.total_bytes,
                    "problems": [{"key": p.key, "problem": p.what} for p in report.problems],
                    "extras": report.extras,
                },
                indent=2,
            )
        )
    else:
        print(report.summary(), file=sys.stdout if report.ok else sys.stderr)
    if report.extras:
        print(
            f"note: {len(report.extras)} objects under {report.dest} are not in the manifest "
            f"(e.g. {report.extras[0]})",
            file=sys.stderr,
        )
    return EXIT_OK if report.ok else EXIT_FAILED


def build_parser(prog: str = "python -m checkpoint") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog, description="Stage a model checkpoint in S3 and verify it."
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    add_commands(parser.add_subparsers(dest="command", required=True))
    return parser


def main(argv: list[str] | None = None) -> int:
    """`python -m checkpoint`: the in-cluster Job's entry point."""
    tolerant_streams()
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args, None)
    except Exception as exc:
        return unhandled(exc, args.debug)
