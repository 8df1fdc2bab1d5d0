"""`hyperpod-dpd policy-pack [--out build/policy-pack] [--no-venv]`: assemble the CrossGuard pack
directory that `pulumi preview --policy-pack <dir>` runs and `pulumi policy publish` uploads."""

from __future__ import annotations

import argparse
from pathlib import Path

from core import cli_inputs as inputs
from core.cli_help import described


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "policy-pack",
        help="assemble the self-contained CrossGuard pack (and its venv)",
        description="Assemble the CrossGuard pack directory that `pulumi preview --policy-pack "
        "DIR` runs and `pulumi policy publish` uploads: the project's policy rules and their "
        "own venv from policies/requirements.txt.",
    )
    described(
        parser,
        ["hyperpod-dpd policy-pack", "hyperpod-dpd policy-pack --out build/pack --no-venv"],
        {0: "assembled", 2: "bad input: --out holds files the pack does not write"},
    )
    parser.add_argument(
        "--out", type=inputs.output_dir, help="pack directory (default build/policy-pack)"
    )
    parser.add_argument("--no-venv", action="store_true", help="do not build the pack's venv")
    parser.add_argument(
        "--project-dir", type=inputs.project_dir, help="directory of Pulumi.yaml (default: found)"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, project_dir: Path) -> int:
    from hyperpod_dpd.policy.command import run as policy_pack

    return policy_pack(args, project_dir)
