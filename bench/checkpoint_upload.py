"""Benchmark: `hyperpod-dpd checkpoint upload` against `aws s3 sync` and `s5cmd cp`.

  .venv/bin/python -m bench.checkpoint_upload [--shards 4] [--shard-size 256MiB] [--runs 3]
                                              [--concurrency 16] [--part-size 16MiB]

Generates a checkpoint-shaped data set (a few large shards plus the small JSON files of a
Hugging Face model) in a temp dir, starts a local S3 endpoint (moto on 127.0.0.1, in this
process), then uploads the same data with each tool, interleaved (the order rotates every
run), each run to a fresh prefix, and reports the median of the runs: wall time, client CPU
seconds per GiB (getrusage(RUSAGE_CHILDREN) deltas: every tool, ours included, runs as a child
process), ratios against aws-cli and s5cmd, and a no-op resync (the same command again with
everything in place) with the number of object-writing requests it sent; then the issue's
targets, met or missed, for each of our rows.

aws-cli runs twice per round: as it comes (a CRC32 per part, COMPOSITE), and with
`--checksum-algorithm CRC64NVME`, the full-object checksum ours uses, to show what that
checksum costs the server apart from the tool.

Ours runs three times per round: `--transfer-client auto` (the default; the row names the
client it picked), `crt` and `classic`, each explicitly. Each of our uploads starts with an
empty checksum cache of its own (HYPERPOD_DPD_CHECKSUM_CACHE), so the upload is measured cold
(every file read and hashed) and its resync uses what that upload remembered, as a user's
rerun would. Our modules are byte-compiled first (`compileall`), as an installed package is:
the peers' venv was byte-compiled by pip, and PYTHONDONTWRITEBYTECODE, set in some sandboxes,
would otherwise make every run of ours compile its own modules from source.

The peers come from bench/requirements.txt and bench/requirements-crt.txt, installed into
build/bench-venv and build/bench-venv-crt on first use.
Nothing here is a test: numbers depend on the machine, and moto (one Python process) is the
bottleneck for wall time on a small machine; CPU per GiB is the client's own cost.

The pieces are the modules beside it in the bench package: fake_checkpoint (the data set), local_s3 (the moto endpoint, counting writes),
upload_tools (the tools and their argv), measure (one run, the interleaved rounds) and
upload_report (the table).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import sys
import tempfile
from pathlib import Path

import boto3

from bench.fake_checkpoint import MiB, make_dataset
from bench.local_s3 import BUCKET, CREDENTIALS, REGION, CountingMotoServer
from bench.measure import interleaved_runs
from bench.upload_report import report
from bench.upload_tools import PEER_VENVS, ROOT, bench_venv, byte_compile, tools, version
from core.units import parse_byte_size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--shard-size", type=parse_byte_size, default=256 * MiB)
    parser.add_argument("--runs", type=int, default=3, help="runs per tool (median; >= 3)")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--part-size", type=parse_byte_size, default=16 * MiB)
    parser.add_argument("--tmp-dir", type=Path, help="where the data set is generated")
    parser.add_argument("--json", type=Path, help="also write the raw samples here")
    args = parser.parse_args(argv)
    if args.runs < 3:
        parser.error("--runs must be at least 3 (the table shows medians)")
    if args.part_size % MiB:
        parser.error("--part-size must be whole MiB (s5cmd takes MiB)")

    bins = [bench_venv(requirements) for requirements in PEER_VENVS]
    bin_dir = bins[0]
    # moto's server logs every request line to stderr from its own threads: CPU taken from
    # every tool alike on a small machine, and noise; errors still show.
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    workdir = Path(tempfile.mkdtemp(prefix="ckpt-bench-", dir=args.tmp_dir))
    server = CountingMotoServer()
    try:
        data = workdir / "checkpoint"
        print(
            f"generating {args.shards} x {args.shard_size // MiB} MiB shards ...", file=sys.stderr
        )
        sizes = make_dataset(data, args.shards, args.shard_size)
        total = sum(sizes.values())
        os.environ.update(CREDENTIALS)  # dummy credentials for the local endpoint only
        byte_compile()
        server.start()
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        client = boto3.client("s3", endpoint_url=server.endpoint, region_name=REGION)
        client.create_bucket(
            Bucket=BUCKET, CreateBucketConfiguration={"LocationConstraint": REGION}
        )
        peers = tools(args, data, server.endpoint, bins, workdir, len(sizes))
        samples, resyncs = interleaved_runs(args.runs, peers, server, client, env, workdir, sizes)
        versions = {
            "aws s3 sync": version([str(bin_dir / "aws"), "--version"]),
            "s5cmd cp": version([str(bin_dir / "s5cmd"), "version"]),
        }
        print(report(args, sizes, samples, resyncs, versions))
        if args.json:
            args.json.write_text(
                json.dumps(
                    {
                        "bytes": total,
                        "files": len(sizes),
                        "upload": {k: [vars(s) for s in v] for k, v in samples.items()},
                        "resync": {k: [vars(s) for s in v] for k, v in resyncs.items()},
                        "versions": versions,
                    },
                    indent=2,
                )
            )
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
