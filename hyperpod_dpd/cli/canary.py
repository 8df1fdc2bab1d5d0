"""`hyperpod-dpd canary`: promote, hold or roll back a candidate of the traffic split.

  hyperpod-dpd canary --stack S [--endpoint KEY] [--baseline KEY ...] [--window 30m]
                      [--prometheus-url URL] [--format text|json]

Compares the candidate (--endpoint) with its baseline (default: the other endpoints of
hyperpod-dpd:traffic) over the window, on their serving pools' vLLM series: error rate (Fisher's
exact test, and a binomial test against the SLO's budget), TTFT p50/p99 and ITL p50/p99 (against
the SLO and the baseline, with slo.baselineMargin), output tokens/s per GPU and USD per million
output tokens (the plan's prices). Prometheus: --prometheus-url (any server), else the stack's
Amazon Managed Prometheus workspace, queried with SigV4 (your AWS credentials).

Exit codes: 0 promote (next: the next weight step's command), 1 rollback (next: the rollback's
command; a pipeline stops), 4 hold (too few requests on a side: ask again later), 2 bad input
(an unreachable Prometheus, a wrong workspace, missing credentials: the message names the flag
or the stack key), 3 internal error. The verdict's rules: hyperpod_dpd/canary/verdict.py.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from core import cli_inputs as inputs
from core.cli_help import described


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `canary` to the hyperpod-dpd command line."""
    p = subparsers.add_parser(
        "canary",
        help="promote, hold or roll back a candidate from live metrics",
        description="Compare a candidate of the traffic split (--endpoint) with its baseline over "
        "a window of their vLLM series on Prometheus (error rate, TTFT, ITL, tokens/s per GPU, "
        "cost per million output tokens) against the SLO, and print the verdict with the exact "
        "next command: the next weight step, or the rollback.",
    )
    described(
        p,
        ["hyperpod-dpd canary --stack canary --endpoint candidate",
         "hyperpod-dpd canary --stack canary --endpoint candidate --window 2h "
         "--prometheus-url http://localhost:9090 --format json"],
        {0: "promote (next: the next weight step)", 1: "rollback (next: the rollback)",
         2: "bad input: a Prometheus out of reach, a missing workspace or credentials, named",
         4: "hold: too few requests on a side to judge; ask again later"},
    )  # fmt: skip
    p.add_argument(
        "--stack", required=True, type=inputs.stack_name, help="the stack (Pulumi.<stack>.yaml)"
    )
    p.add_argument(
        "--endpoint",
        help="the candidate: a key of hyperpod-dpd:endpoints (default: the one endpoint of "
        "hyperpod-dpd:traffic other than its baseline)",
    )
    p.add_argument(
        "--baseline",
        action="append",
        help="the endpoint to compare with (repeatable); default: the other endpoints of "
        "hyperpod-dpd:traffic",
    )
    p.add_argument("--window", default="30m", help="how far back to compare (30m, 2h, 1d)")
    p.add_argument(
        "--prometheus-url",
        type=inputs.http_url,
        help="a Prometheus HTTP API base URL; default: the stack's AMP workspace (SigV4)",
    )
    p.add_argument("--format", choices=["text", "json"], default="text", help="output format")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace, project_dir: Path) -> int:
    from hyperpod_dpd.canary.command import run as canary

    return canary(args, project_dir)
