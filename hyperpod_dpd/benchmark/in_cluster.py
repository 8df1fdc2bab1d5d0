"""The in-cluster benchmark Job's program: the staged tokenizer from S3, the same run as on a
laptop (run.execute), then every file of the results directory to S3.

  python -m hyperpod_dpd.benchmark.in_cluster --target URL --bucket B --tokenizer-prefix P
      --tokenizer-file tokenizer.json [...] --results-prefix benchmarks/<run id> --out DIR
      [--endpoint JSON] [workload flags: --scenario --concurrency --requests|--duration ...]

It runs from the files the Job's ConfigMap ships (hyperpod_dpd/benchmark/job.py lists them),
with the image's Python and boto3; aiperf's venv is built from requirements-loadtest.txt by the
same code a laptop uses. The results are uploaded even when the run failed (aiperf.log says
why). Exit codes: 0 done, 1 the run or a request failed, 2 bad flags or no tokenizer.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path

import boto3
from botocore.exceptions import BotoCoreError, ClientError

from core.exits import EXIT_BAD_INPUT, EXIT_FAILED
from hyperpod_dpd.benchmark.run import (
    TOKENIZER_REQUIRED_ANY,
    RunError,
    check_target,
    execute,
    run_plan,
)
from hyperpod_dpd.benchmark.scenario import BenchmarkArgError, add_workload_flags

# What GetObject answers for a key the role may not read or that is absent. The role reads the
# tokenizer files by exact key and cannot list, so S3 answers AccessDenied for a missing one.
_ABSENT = {"NoSuchKey", "404", "AccessDenied", "403"}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m hyperpod_dpd.benchmark.in_cluster")
    p.add_argument("--target", required=True, help="the endpoint's in-cluster URL")
    p.add_argument("--bucket", required=True, help="the model bucket")
    p.add_argument("--tokenizer-prefix", required=True, help="the staged checkpoint's prefix")
    p.add_argument("--tokenizer-file", action="append", required=True, help="key under it")
    p.add_argument("--results-prefix", required=True, help="where the results go in the bucket")
    p.add_argument("--out", type=Path, required=True, help="local results directory")
    p.add_argument("--endpoint", type=json.loads, help="the stack's endpoint facts (JSON)")
    add_workload_flags(p)
    return p


def fetch_tokenizer(s3, bucket: str, prefix: str, files: list[str], into: Path) -> Path:
    into.mkdir(parents=True, exist_ok=True)
    got = []
    for name in files:
        key = f"{prefix.strip('/')}/{name}"
        try:
            body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in _ABSENT:
                continue
            raise
        (into / name).write_bytes(body)
        got.append(name)
    if not any(name in got for name in TOKENIZER_REQUIRED_ANY):
        raise BenchmarkArgError(
            "tokenizer", f"s3://{bucket}/{prefix}/", f"a staged checkpoint with one of "
            f"{', '.join(TOKENIZER_REQUIRED_ANY)} that the runner role may read",
            "stage the checkpoint first (checkpoint.staging: job, or `hyperpod-dpd checkpoint "
            "upload`); after changing a checkpoint's prefix or revision (the stack's or the "
            "endpoint's own), `pulumi up` first (the role reads the tokenizer files of the "
            "copies the stack stages only)",
        )  # fmt: skip
    print(f"tokenizer: {', '.join(got)} from s3://{bucket}/{prefix}/", flush=True)
    return into


def upload_results(s3, out: Path, bucket: str, prefix: str) -> int:
    """Every file under `out`, at the same relative path under `prefix`. The role may only
    PutObject under benchmarks/, so nothing else can be written (or overwritten)."""
    files = sorted(p for p in out.rglob("*") if p.is_file())
    for path in files:
        s3.upload_file(str(path), bucket, f"{prefix}/{path.relative_to(out).as_posix()}")
    print(f"uploaded {len(files)} files to s3://{bucket}/{prefix}/", flush=True)
    return len(files)


class Terminated(Exception):
    """SIGTERM: the Job's deadline, or `kubectl delete job`. The container is this program
    (PID 1 ignores SIGTERM without a handler, and SIGKILL follows the grace period): raised so
    the results so far are uploaded before the pod goes."""


def _terminate(signum, frame):
    raise Terminated()


def main(argv: list[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, _terminate)
    args = parser().parse_args(argv)
    s3 = boto3.client("s3")
    try:
        plan = run_plan(args)
        target = check_target(args.target)
        tokenizer = fetch_tokenizer(
            s3, args.bucket, args.tokenizer_prefix, args.tokenizer_file,
            args.out.parent / "tokenizer",
        )  # fmt: skip
    except BenchmarkArgError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except (BotoCoreError, ClientError) as exc:
        print(f"error: reading the tokenizer from s3://{args.bucket}/: {exc}", file=sys.stderr)
        return EXIT_FAILED
    code = 1
    try:
        code = execute(plan, target, tokenizer, args.endpoint)
    except RunError as exc:
        print(f"error: {exc}", file=sys.stderr)
    except Terminated:
        print("error: stopped (SIGTERM: the Job's deadline or its deletion)", file=sys.stderr)
    finally:
        try:
            upload_results(s3, plan.out, args.bucket, args.results_prefix)
        except (BotoCoreError, ClientError) as exc:
            print(f"error: uploading the results failed: {exc}", file=sys.stderr)
            code = 1
    return code


if __name__ == "__main__":
    sys.exit(main())
