"""`hyperpod-dpd plan --stack S [--out DIR] [--format text|json]`: the offline plan of a stack.

Exit codes: 0 fine (advisories allowed), 1 a mandatory policy violation, 2 bad configuration,
3 an internal error (rerun with --debug for the traceback). The plan itself: hyperpod_dpd/plan.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from core import cli_inputs as inputs
from core.cli_help import described


def register(subparsers: argparse._SubParsersAction) -> None:
    plan = subparsers.add_parser(
        "plan",
        help="offline plan of a stack (no cloud, no Pulumi CLI)",
        description="Run the stack's Pulumi program under Pulumi's mock engine and a fake AWS: "
        "every resource `pulumi up` would create, the policy gate's verdict, the hourly cost, "
        "written to build/plan/<stack>/ (plan.json, summary.md, resources.json, manifests/).",
    )
    described(
        plan,
        ["hyperpod-dpd plan --stack dev",
         "hyperpod-dpd plan --stack canary --out build/plan/canary-50 --format json"],
        {0: "planned (advisories allowed)", 1: "a mandatory policy violation (named, with its fix)",
         2: "bad configuration: the key, the value, what is allowed and the fix"},
    )  # fmt: skip
    plan.add_argument(
        "--stack",
        required=True,
        type=inputs.stack_name,
        help="stack name: reads Pulumi.<stack>.yaml",
    )
    plan.add_argument(
        "--out", type=inputs.output_dir, help="output directory (default build/plan/<stack>)"
    )
    plan.add_argument("--format", choices=["text", "json"], default="text", help="output format")
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
