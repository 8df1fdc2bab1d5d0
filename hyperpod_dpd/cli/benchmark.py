"""`hyperpod-dpd benchmark run|compare|fake-server`: is DPD worth it on my traffic?

  hyperpod-dpd benchmark run --target URL --tokenizer PATH --scenario 'D(4096,256)'
      --concurrency 8,16,32 --out DIR [--requests N | --duration S] [--label TEXT]
      [--model NAME] [--stack S [--endpoint KEY]] [--gpus N] [--hourly-cost USD]
  hyperpod-dpd benchmark run --stack S [--endpoint KEY] --scenario ... --concurrency ... --out DIR
      [--bucket B] [--service URL] [--kubeconfig K] [--context C] [--timeout MIN]
  hyperpod-dpd benchmark compare BASE HEAD [RUN ...] --out DIR
  hyperpod-dpd benchmark fake-server [--port 8000] [--interference 5] ...

`run` drives aiperf (build/loadtest-venv, from requirements-loadtest.txt) against an
OpenAI-compatible chat completions endpoint with streaming and writes DIR/results.json (plus
aiperf's own exports under DIR/aiperf/). With `--stack`, results.json also records the stack's
endpoint (mode, replicas, TP, threshold, buffer, image, chunked-prefill flags, GPUs, hourly
cost; `--endpoint KEY` picks one of a stack's several endpoints); with `--stack` and no
`--target` the same run happens in the stack's cluster, as a Job on the system group against
that endpoint (the DPD router, or the colocated endpoint's Service; cluster_run.py), and its
results are copied from s3://<model bucket>/benchmarks/<run id>/ to DIR. `compare` writes DIR/report.md and PNG charts.
Exit codes: 0 done, 1 the load generator or a request failed, 2 bad input, 3 internal error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core import cli_inputs as inputs
from core.cli_help import described


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "benchmark",
        help="DPD against colocated on your endpoint: run a load, compare runs, charts",
        description="Is DPD worth it on your traffic: run a load against an endpoint (local, or "
        "as a Job in the stack's cluster), compare runs, draw the charts.",
    )
    described(
        p,
        ["hyperpod-dpd benchmark run --stack prod --scenario 'D(4096,256)' --concurrency 8,16,32 "
         "--out results/dpd",
         "hyperpod-dpd benchmark compare results/colocated results/dpd --out results/report",
         "hyperpod-dpd benchmark fake-server --port 8101 --interference 5"],
        {0: "done", 1: "the load generator or a request failed", 2: "bad input, named"},
    )  # fmt: skip
    from hyperpod_dpd.benchmark.scenario import add_workload_flags

    sub = p.add_subparsers(dest="benchmark_command", required=True)

    run = sub.add_parser(
        "run",
        help="run aiperf against an endpoint; writes DIR/results.json",
        description="Run aiperf (build/loadtest-venv) against an OpenAI-compatible endpoint at "
        "each concurrency, streaming, and write DIR/results.json: TTFT, TPOT, ITL, E2E "
        "percentiles, throughput, errors; with --stack, the endpoint's facts and cost. Without "
        "--target, the same run as a Job in the stack's cluster.",
    )
    described(
        run,
        ["hyperpod-dpd benchmark run --target http://127.0.0.1:8101 --tokenizer "
         "hyperpod_dpd/benchmark/word_tokenizer --scenario 'D(1024,32)' --concurrency 4,8 "
         "--duration 10 --out build/demo/colocated",
         "hyperpod-dpd benchmark run --stack canary --endpoint candidate --scenario 'D(4096,256)' "
         "--concurrency 8,16,32 --out results/candidate"],
        {0: "done", 1: "the load generator or a request failed (results.json says which)",
         2: "bad input: a flag, the stack, the cluster's kubeconfig, named"},
    )  # fmt: skip
    run.add_argument("--target", help="OpenAI-compatible base URL, e.g. http://localhost:8000")
    run.add_argument(
        "--tokenizer", type=Path, help="local tokenizer: a directory or its tokenizer.json"
    )
    add_workload_flags(run)
    run.add_argument(
        "--out", type=inputs.output_dir, required=True, help="results directory (created)"
    )
    run.add_argument(
        "--stack",
        type=inputs.stack_name,
        help="record this stack's endpoint; without --target, run in-cluster",
    )
    run.add_argument(
        "--endpoint", metavar="KEY",
        help="with --stack: which of its endpoints (a key of hyperpod-dpd:endpoints; needed "
        "when it has several)",
    )  # fmt: skip
    run.add_argument(
        "--gpus", type=int,
        help="GPUs serving the endpoint, for output tokens/s per GPU (default: the stack's "
        "replicas x GPUs per node)",
    )  # fmt: skip
    run.add_argument(
        "--hourly-cost", type=inputs.finite_float,
        help="USD per hour of the endpoint, for cost per 1M output tokens (default: the stack's)",
    )  # fmt: skip
    run.add_argument(
        "--project-dir", type=inputs.project_dir, help="directory of Pulumi.yaml (default: found)"
    )
    job = run.add_argument_group("in-cluster run (--stack without --target)")
    job.add_argument("--bucket", help="model bucket (default: checkpoint.bucketName, else "
                     "`pulumi stack output modelBucket`)")  # fmt: skip
    job.add_argument("--service", help="in-cluster URL to load (default: the DPD router; for "
                     "colocated, the Service the endpoint owns)")  # fmt: skip
    job.add_argument(
        "--kubeconfig", type=inputs.input_file, help="default: $KUBECONFIG or ~/.kube/config"
    )
    job.add_argument("--context", help="kubeconfig context (default: the current one)")
    job.add_argument("--timeout", type=inputs.finite_float, default=240.0,
                     help="minutes the Job may take, venv build included (240)")  # fmt: skip
    job.add_argument("--poll-interval", type=inputs.finite_float, default=5.0, help="seconds (5)")
    job.add_argument("--dry-run", action="store_true", help="check everything, print the Job and "
                     "its ConfigMap as YAML, create nothing")  # fmt: skip
    run.set_defaults(handler=run_benchmark)

    compare = sub.add_parser(
        "compare",
        help="report.md and charts: each run against the first",
        description="Compare runs of `benchmark run`: DIR/report.md (the runs' endpoints, then "
        "a table per concurrency with each run's improvement over the first) and PNG charts.",
    )
    described(
        compare,
        ["hyperpod-dpd benchmark compare build/demo/colocated build/demo/dpd --out "
         "build/demo/report",
         "hyperpod-dpd benchmark compare results/baseline results/candidate --out results/report "
         "--predicted"],
        {0: "compared", 1: "--predicted: the simulator failed on a run",
         2: "bad input: a directory that holds no results.json of ours"},
    )  # fmt: skip
    compare.add_argument("runs", nargs="+", type=Path, help="BASE HEAD [RUN ...]: run directories")
    compare.add_argument(
        "--out", type=inputs.output_dir, required=True, help="report directory (created)"
    )
    compare.add_argument(
        "--predicted",
        action="store_true",
        help="also set what `advise` predicts for each run's layout and workload beside what it "
        "measured, gaps over 25%% flagged (aisimulate, build/advise-venv)",
    )
    compare.set_defaults(handler=compare_runs)

    fake = sub.add_parser(
        "fake-server",
        help="a local OpenAI-compatible server with known timings, to try it out",
        description="A local OpenAI-compatible streaming server with known timings (no GPU, no "
        "model), to try `benchmark run` on: --interference makes it behave colocated, "
        "--transfer-ms disaggregated. It serves until Ctrl-C; GET /v1/models answers once it "
        "listens.",
    )
    described(
        fake,
        ["hyperpod-dpd benchmark fake-server --port 8101 --interference 5",
         "hyperpod-dpd benchmark fake-server --port 8102 --transfer-ms 100"],
        {0: "stopped", 2: "bad input, or the port is taken"},
    )  # fmt: skip
    from hyperpod_dpd.benchmark.fake_timings import add_arguments

    add_arguments(fake)
    fake.set_defaults(handler=fake_server)


def run_benchmark(args: argparse.Namespace, project_dir: Path) -> int:
    from hyperpod_dpd.benchmark.command import run_benchmark as run

    return run(args, project_dir)


def compare_runs(args: argparse.Namespace, project_dir: Path) -> int:
    from hyperpod_dpd.benchmark.command import compare_runs as compare

    if args.predicted:
        # Every run is one `advise` can predict (a layout recorded with --stack, fixed lengths)
        # before report.md is written: a refusal after it would leave a report and exit 2.
        from core.exits import EXIT_BAD_INPUT, UsageProblem
        from hyperpod_dpd.advise.measured import read_run, run_layout, run_lengths

        try:
            for run in args.runs:
                data = read_run(run)
                run_layout(data, run)
                run_lengths(data, run)
        except UsageProblem as exc:
            print(f"error: --predicted: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
    code = compare(args, project_dir)
    if code != 0 or not args.predicted:
        return code
    # Each run as `advise --measured RUN` would take it: the two rooms stay apart.
    from hyperpod_dpd.cli import advise

    parser = argparse.ArgumentParser(prog="hyperpod-dpd")
    advise.register(parser.add_subparsers())
    for run in args.runs:
        measured = parser.parse_args(["advise", "--measured", str(run), "--no-chart"])
        print(f"\n{run}: predicted beside measured")
        code = max(code, measured.handler(measured, project_dir))
    return code


def fake_server(args: argparse.Namespace, project_dir: Path) -> int:
    from hyperpod_dpd.benchmark.command import fake_server as serve

    return serve(args, project_dir)
