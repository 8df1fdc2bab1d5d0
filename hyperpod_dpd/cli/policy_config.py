"""`hyperpod-dpd policy-config --stack prod`: the CrossGuard pack's config for a stack.

The stack's `hyperpod-dpd:policy` (per-rule enforcement, advisoriesMandatory) is what the offline
plan and the components apply; `pulumi preview --policy-pack policies --policy-pack-config F`
applies it in the real preview when F is this command's output.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from core import cli_inputs as inputs


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("policy-config", help="CrossGuard pack config of a stack")
    parser.add_argument("--stack", required=True, type=inputs.stack_name)
    parser.add_argument("--out", type=inputs.output_file, help="write here instead of stdout")
    parser.add_argument("--project-dir", type=inputs.project_dir)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, project_dir: Path) -> int:
    from hyperpod_dpd.policy.config import run as policy_config

    return policy_config(args, project_dir)
