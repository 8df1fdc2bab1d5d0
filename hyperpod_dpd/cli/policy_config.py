"""`hyperpod-dpd policy-config --stack prod`: the CrossGuard pack's config for a stack.

The stack's `hyperpod-dpd:policy` (per-rule enforcement, advisoriesMandatory) is what the offline
plan and the components apply; `pulumi preview --policy-pack policies --policy-pack-config F`
applies it in the real preview when F is this command's output.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from core import cli_inputs as inputs
from core.cli_help import described


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "policy-config",
        help="CrossGuard pack config of a stack",
        description="The CrossGuard pack's config (JSON) carrying the stack's "
        "hyperpod-dpd:policy, for `pulumi preview --policy-pack build/policy-pack "
        "--policy-pack-config F`.",
    )
    described(
        parser,
        ["hyperpod-dpd policy-config --stack prod --out build/policy-config-prod.json"],
        {0: "written", 2: "bad input: the stack file or --out"},
    )
    parser.add_argument(
        "--stack", required=True, type=inputs.stack_name, help="reads Pulumi.<stack>.yaml"
    )
    parser.add_argument("--out", type=inputs.output_file, help="write here instead of stdout")
    parser.add_argument(
        "--project-dir", type=inputs.project_dir, help="directory of Pulumi.yaml (default: found)"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, project_dir: Path) -> int:
    from hyperpod_dpd.policy.config import run as policy_config

    return policy_config(args, project_dir)
