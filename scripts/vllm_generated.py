"""What both vLLM extractors (extract_vllm_args.py, extract_vllm_metrics.py) share: their command
line, and checking, recording and writing a file generated from the pinned vLLM's source."""

from __future__ import annotations

import argparse
import gzip
import sys
from pathlib import Path

from core.versions import WORKER_VLLM_VERSION


def parse_args(doc: str, recorded: Path, out: Path, record_help: str, argv: list[str] | None):
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument(
        "--source", type=Path, default=recorded, help="wheel, checkout or recorded dir"
    )
    parser.add_argument("--version", default=WORKER_VLLM_VERSION, help="the vLLM version it is")
    parser.add_argument("--out", type=Path, default=out)
    parser.add_argument("--record", action="store_true", help=record_help)
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    return parser.parse_args(argv)


def check_or_write(
    args: argparse.Namespace, text: str, script: str, recorded: Path, sources: dict[str, str]
) -> int | None:
    """--check: 0 when `args.out` holds `text`, else 1. Otherwise record `sources` (path ->
    text, gzipped under `recorded`) with --record, write `text` and return None: the script
    says what it wrote."""
    if args.check:
        if not args.out.is_file() or args.out.read_text() != text:
            print(f"{args.out} is stale: run python scripts/{script}", file=sys.stderr)
            return 1
        print(f"{args.out} matches vLLM {args.version}'s source")
        return 0
    if args.record:
        recorded.mkdir(parents=True, exist_ok=True)
        for path, body in sources.items():
            gz = gzip.compress(body.encode(), mtime=0)
            (recorded / (Path(path).name + ".gz")).write_bytes(gz)
    args.out.write_text(text)
    return None
