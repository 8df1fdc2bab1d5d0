"""`hyperpod-dpd rollout`: the canary's verdict acted on, step by step, through Pulumi.

  hyperpod-dpd rollout --stack S --endpoint CANDIDATE [--baseline KEY ...] [--steps 5,25,50,100]
                       [--window 30m] [--interval 10m] [--prometheus-url URL] [--dry-run]
                       [--once] [--commit] [--format text|json]

Reads the weights the stack file holds (hyperpod-dpd:traffic) and checks the stack deployed
them; judges the candidate as `hyperpod-dpd canary` does over --window; on promote moves it to
the next of --steps, on rollback to 0, on hold waits --interval and judges again; at 100 it
stops and says how to retire the baseline. Each step changes the routing only (checked on the
offline plans) and is applied with the Automation API (`pulumi config set-all --path`,
`preview`, `up` with the policy pack); --commit commits the stack file with the verdict.
--dry-run judges once and prints the step and the commands it would run, changing nothing;
--once applies at most one step. Killed at any point, a rerun continues from the weights the
stack holds; one rollout of a stack runs at a time (the room: hyperpod_dpd/rollout).

Exit codes: 0 promote (or done), 4 hold, 1 rollback (or a check stopped the step: the line says
which), 2 bad input naming the flag or key, 3 internal error.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from core import cli_inputs as inputs
from core.cli_help import described
from core.exits import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_HOLD, EXIT_OK


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `rollout` to the hyperpod-dpd command line."""
    p = subparsers.add_parser(
        "rollout",
        help="shift a candidate's traffic step by step on the canary's verdict, through Pulumi",
        description="Act on the canary's verdict step by step, through Pulumi: promote the "
        "candidate (--endpoint) to the next of --steps, roll it back to 0, or wait and judge "
        "again; each step changes the routing only and is applied with `pulumi up` and the "
        "policy pack. Killed at any point, a rerun continues from the weights the stack holds.",
    )
    described(
        p,
        ["hyperpod-dpd rollout --stack canary --endpoint candidate --dry-run",
         "hyperpod-dpd rollout --stack canary --endpoint candidate --once --commit",
         "hyperpod-dpd rollout --stack canary --endpoint candidate --steps 5,50,100 "
         "--window 1h --interval 15m"],
        {EXIT_OK: "promote, or done at 100%: the line says how to retire the baseline",
         EXIT_FAILED: "rollback, or a check stopped the step: the line says which",
         EXIT_BAD_INPUT: "bad input: the message names the flag or the stack key",
         EXIT_HOLD: "hold: too few requests to judge; judged again after --interval"},
    )  # fmt: skip
    p.add_argument(
        "--stack", required=True, type=inputs.stack_name, help="the stack (Pulumi.<stack>.yaml)"
    )
    p.add_argument(
        "--endpoint", required=True, help="the candidate: a key of hyperpod-dpd:endpoints"
    )
    p.add_argument(
        "--baseline",
        action="append",
        help="the endpoint to compare with (repeatable); default: the split's other endpoints",
    )
    p.add_argument(
        "--steps",
        type=inputs.weight_steps,
        default=(5, 25, 50, 100),
        help="the candidate's weights, in percent (default 5,25,50,100)",
    )
    p.add_argument(
        "--window", type=inputs.duration, default="30m", help="how far back to judge (30m)"
    )
    p.add_argument(
        "--interval",
        type=inputs.duration,
        default="10m",
        help="how long to wait before judging again (10m)",
    )
    p.add_argument(
        "--prometheus-url",
        type=inputs.http_url,
        help="a Prometheus HTTP API base URL; default: the stack's AMP workspace (SigV4)",
    )
    p.add_argument(
        "--policy-pack",
        type=inputs.input_path,
        help="the CrossGuard pack each preview and update run (default build/policy-pack)",
    )
    p.add_argument(
        "--dry-run", action="store_true", help="judge once and print the step; change nothing"
    )
    p.add_argument("--once", action="store_true", help="apply at most one step, then exit")
    p.add_argument(
        "--commit", action="store_true", help="commit each applied step's stack file (git)"
    )
    p.add_argument(
        "--format", choices=["text", "json"], default="text", help="output format (text)"
    )
    p.add_argument(
        "--project-dir",
        type=inputs.project_dir,
        help="directory of Pulumi.yaml (default: found)",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace, project_dir: Path) -> int:
    from hyperpod_dpd.rollout.command import run as rollout

    return rollout(args, project_dir)
