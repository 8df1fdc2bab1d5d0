"""`hyperpod-dpd preflight --stack S [--format text|json]`: before the first `pulumi up`, ask
AWS whether the stack can work (GPU types offered in the AZ, HyperPod quotas, training plans,
pinned add-on versions); on a deployed stack, also whether the nodes' boot script in S3 is
still the one `pulumi up` uploaded (its stack outputs, via `pulumi stack output`). Exit 1 on
any FAIL."""

from __future__ import annotations

import argparse
from pathlib import Path

from core import cli_inputs as inputs
from core.cli_help import described


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "preflight",
        help="check AWS capacity, quotas, plans (boto3)",
        description="Before the first `pulumi up`, ask AWS (read-only, your credentials) whether "
        "the stack can work: its GPU instance types offered in its Availability Zone, the "
        "HyperPod quotas its groups need, its training plans, the pinned add-on versions.",
    )
    described(
        parser,
        ["hyperpod-dpd preflight --stack prod", "hyperpod-dpd preflight --stack dev --format json"],
        {0: "every check passed (or was skipped)", 1: "a check failed (FAIL, with why and what to do)",
         2: "bad input: the stack file, or AWS credentials"},
    )  # fmt: skip
    parser.add_argument(
        "--stack", required=True, type=inputs.stack_name, help="reads Pulumi.<stack>.yaml"
    )
    parser.add_argument("--format", choices=["text", "json"], default="text", help="output format")
    parser.add_argument(
        "--project-dir", type=inputs.project_dir, help="directory of Pulumi.yaml (default: found)"
    )
    parser.set_defaults(handler=run, client_factory=None)


def run(args: argparse.Namespace, project_dir: Path) -> int:
    from hyperpod_dpd.preflight.command import run as preflight

    return preflight(args, project_dir)
