"""`hyperpod-dpd diff BASE HEAD [--stack S] [--format markdown|text|json] [--out F]`: what a
change does, from two offline plans (directories, or git refs planned each with its own code).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from core import cli_inputs as inputs
from core.cli_help import described


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "diff",
        help="compare two plans (directories or git refs)",
        description="What a change does, from two offline plans (directories `hyperpod-dpd plan "
        "--out` wrote, or git refs, each planned with its own code): resources added, changed "
        "and replaced, manifests, policy findings, sizing, cost, and whether the change moves "
        "more than one variable.",
    )
    described(
        parser,
        ["hyperpod-dpd diff build/plan/canary build/plan/canary-50 --format text",
         "hyperpod-dpd diff main HEAD --stack prod --out build/diff.md"],
        {0: "compared (advisories allowed)",
         1: "a finding the head stack's hyperpod-dpd:policy makes mandatory",
         2: "bad input: a side that is neither a plan directory nor a git ref, or a side's stack "
            "does not plan"},
    )  # fmt: skip
    parser.add_argument(
        "base",
        help="the plan before the change: a directory written by `hyperpod-dpd plan --out`, or "
        "a git branch, tag or commit (then give --stack)",
    )
    parser.add_argument("head", help="the plan after the change: a directory or a git ref, alike")
    parser.add_argument(
        "--stack", type=inputs.stack_name, help="with git refs: the stack to plan at each ref"
    )
    parser.add_argument(
        "--format",
        choices=["markdown", "text", "json"],
        default="markdown",
        help="output format (markdown: a pull request comment)",
    )
    parser.add_argument("--out", type=inputs.output_file, help="also write the output to this file")
    parser.add_argument(
        "--project-dir", type=inputs.project_dir, help="directory of Pulumi.yaml (default: found)"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, project_dir: Path) -> int:
    from hyperpod_dpd.diff.command import diff

    return diff(args, project_dir)
