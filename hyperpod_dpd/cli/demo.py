"""`hyperpod-dpd demo` (`make demo`): the benchmark and the canary tried offline, in one go.

  hyperpod-dpd demo [--out build/demo] [--only benchmark|canary] [--concurrency 4,8,16]
                    [--duration 10]

The room: hyperpod_dpd/demo (what it runs, and why nothing is left running after it).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from core import cli_inputs as inputs
from core.cli_help import described


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `demo` to the hyperpod-dpd command line."""
    p = subparsers.add_parser(
        "demo",
        help="try the benchmark and the canary offline, on local stand-ins",
        description="Run, offline and in one go, the benchmark against two fake servers (one "
        "colocated, one disaggregated) and the canary on a real Prometheus serving recorded "
        "series of a healthy and a failing candidate, printing each command as it runs it. "
        "Every server it starts is stopped when it ends, fails or is interrupted. Needs "
        "Prometheus and promtool on PATH (apt-get install prometheus).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    described(
        p,
        ["hyperpod-dpd demo", "hyperpod-dpd demo --only canary",
         "hyperpod-dpd demo --concurrency 4 --duration 3 --out build/demo-quick"],
        {0: "both demos ran as they should (the canary: promote, then rollback)",
         1: "a step did not (named)",
         2: "bad input: --out, or no Prometheus or promtool on PATH"},
    )  # fmt: skip
    p.add_argument(
        "--out", type=inputs.output_dir, help="the demo's directory, rewritten on each run "
        "(default: build/demo)",
    )  # fmt: skip
    p.add_argument("--only", choices=["benchmark", "canary"], help="run one of the two")
    p.add_argument(
        "--concurrency", type=_levels, default="4,8,16", help="the benchmark's levels, e.g. 4,8"
    )
    p.add_argument(
        "--duration", type=_seconds, default="10", help="seconds of load at each level (1-600)"
    )
    p.add_argument(
        "--dry-run", action="store_true", help="print the commands it would run, start nothing"
    )
    p.add_argument(
        "--project-dir", type=inputs.project_dir, help="directory of Pulumi.yaml (default: found)"
    )
    p.set_defaults(handler=run)


def _levels(text: str) -> str:
    """Load levels as `benchmark run --concurrency` takes them, checked before anything starts."""
    parts = [part.strip() for part in text.split(",")]
    if not all(p.isdigit() and 1 <= int(p) <= 256 for p in parts) or len(set(parts)) < len(parts):
        raise argparse.ArgumentTypeError(
            f"got {text[:80]!r}; allowed: distinct whole numbers from 1 to 256, comma-separated. "
            "Fix: e.g. --concurrency 4,8,16"
        )
    return ",".join(parts)


def _seconds(text: str) -> str:
    seconds = inputs.finite_float(text)
    if not 1 <= seconds <= 600:
        raise argparse.ArgumentTypeError(
            f"got {text!r}; allowed: 1 to 600 seconds. Fix: e.g. --duration 10"
        )
    return f"{seconds:g}"


def run(args: argparse.Namespace, project_dir: Path) -> int:
    from hyperpod_dpd.demo.command import run as demo

    return demo(args, project_dir)
