"""`hyperpod-dpd advise`: colocated or DPD, and which layout, predicted from the workload and the
SLOs by aisimulate (GPU-free simulation from measured kernel data, in its own venv).

  hyperpod-dpd advise [--stack S [--endpoint NAME] [--write] | --model M --instance-type T]
                      (--isl N --osl N | --trace FILE) [--concurrency 8,16,32 | --rps R,...]
                      [--ttft-ms MS] [--tpot-ms MS] [--max-nodes 4] [--chart PNG | --no-chart]
                      [--all] [--format text|json]
  hyperpod-dpd advise --measured RUN_DIR [--stack S | --model M --instance-type T]
                      [--ttft-ms MS] [--tpot-ms MS]

With an SLO, each pool's autoscaling target from it (prefill: prompt tokens/s within --ttft-ms;
decode: running requests within --tpot-ms), the pools scaled as a pair; --write keeps the
endpoint's mode and writes the targets with the capacity they come from.

Exit codes: 0 advised, 1 no layout meets the SLOs (the closest named, no patch), or --write
found no layout of the endpoint's mode that does (nothing written), 2 bad input (the message
names the flag). The room: hyperpod_dpd/advise.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from core import cli_inputs as inputs
from core.cli_help import described


def _numbers(kind: type) -> object:
    def parse(text: str) -> list:
        try:
            return [kind(part) for part in text.split(",") if part.strip()]
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r}: a comma-separated list of numbers, e.g. 8,16,32"
            ) from None

    return parse


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `advise` to the hyperpod-dpd command line."""
    p = subparsers.add_parser(
        "advise",
        help="colocated or DPD, and which layout (predicted by aisimulate)",
        description="Colocated or DPD, how many replicas per role and which TP: each layout "
        "within --max-nodes predicted from the workload by aisimulate (GPU-free, in its own "
        "venv), the cheapest that meets the SLOs recommended, with the stack patch that sets it.",
    )
    described(
        p,
        ["hyperpod-dpd advise --isl 4096 --osl 256 --tpot-ms 15",
         "hyperpod-dpd advise --stack dev --isl 4096 --osl 256 --ttft-ms 1000 --tpot-ms 15 --write",
         "hyperpod-dpd advise --stack dev --measured results/dpd"],
        {0: "advised", 1: "no layout meets the SLOs (the closest named, no patch)",
         2: "bad input: the message names the flag"},
    )  # fmt: skip
    p.add_argument(
        "--stack",
        type=inputs.stack_name,
        help="read model, instance type, prices and limits from this stack",
    )
    p.add_argument("--endpoint", help="the endpoint's key, for a stack with several")
    p.add_argument("--model", help="catalog model (default llama-3.3-70b, or the stack's)")
    p.add_argument("--instance-type", help="a DPD instance type (default ml.p5.48xlarge)")
    p.add_argument("--isl", type=int, help="input tokens per request")
    p.add_argument("--osl", type=int, help="output tokens per request")
    p.add_argument(
        "--trace", type=inputs.input_file, help="JSONL of input/output token counts per request"
    )
    p.add_argument("--concurrency", type=_numbers(int), help="requests in flight (default 8,16,32)")
    p.add_argument("--rps", type=_numbers(float), help="requests per second, instead")
    p.add_argument(
        "--ttft-ms",
        type=inputs.finite_float,
        help="SLO: TTFT p50 at most this (and the prefill pool's autoscaling target from it)",
    )
    p.add_argument(
        "--tpot-ms",
        type=inputs.finite_float,
        help="SLO: TPOT p50 at most this (and the decode pool's autoscaling target from it)",
    )
    p.add_argument("--max-nodes", type=int, default=4, help="node budget of a layout (default 4)")
    p.add_argument(
        "--chart",
        type=inputs.output_file,
        default=Path("build/advise/frontier.png"),
        help="frontier PNG",
    )
    p.add_argument(
        "--no-chart", dest="chart", action="store_const", const=None, help="draw no chart"
    )
    p.add_argument(
        "--measured",
        type=inputs.input_path,
        help="a benchmark run's directory: its layout and workload predicted beside its numbers",
    )
    p.add_argument(
        "--write",
        action="store_true",
        help="apply the patch to the stack's file (Pulumi.<stack>.yaml), keeping the endpoint's "
        "mode: its layout and the autoscaling targets derived from the SLO",
    )
    p.add_argument(
        "--all",
        action="store_true",
        help="every layout's rows (default: the recommendation and the few nearest it)",
    )
    p.add_argument("--format", choices=["text", "json"], default="text", help="output format")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace, project_dir: Path | None) -> int:
    from hyperpod_dpd.advise.command import run as advise

    return advise(args, project_dir)
