"""`hyperpod-dpd plan --stack S [--out DIR] [--format text|json]`: the offline plan of a stack.

Exit codes: 0 fine (advisories allowed), 1 a mandatory policy violation, 2 bad configuration,
3 an internal error (rerun with --debug for the traceback). The plan itself: hyperpod_dpd/plan.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from core import cli_inputs as inputs


def register(subparsers: argparse._SubParsersAction) -> None:
    plan = subparsers.add_parser("plan", help="offline plan of a stack (no cloud, no Pulumi CLI)")
    plan.add_argument(
        "--stack",
        required=True,
        type=inputs.stack_name,
        help="stack name: reads Pulumi.<stack>.yaml",
    )
    plan.add_argument(
        "--out", type=inputs.output_dir, help="output directory (default build/plan/<stack>)"
    )
    plan.add_argument("--format", choices=["text", "json"], default="text")
    plan.add_argument(
        "--project-dir", type=inputs.project_dir, help="directory of Pulumi.yaml (default: found)"
    )
    plan.add_argument(
        "--preview",
        action="store_true",
        help="plan as the first `pulumi preview` of a new stack sees it (outputs unknown)",
    )
    plan.set_defaults(handler=run)


def run(args: argparse.Namespace, project_dir: Path) -> int:
    from hyperpod_dpd.plan.command import plan

    return plan(args, project_dir)
