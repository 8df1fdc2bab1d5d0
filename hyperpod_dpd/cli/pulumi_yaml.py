"""`hyperpod-dpd pulumi-yaml [--check]`: Pulumi.yaml's config block and the README's config
table, regenerated from the typed settings model (settings/declare.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from core import cli_inputs as inputs


def register(subparsers: argparse._SubParsersAction) -> None:
    gen = subparsers.add_parser(
        "pulumi-yaml",
        help="regenerate Pulumi.yaml's config block and README.md's config table from the model",
    )
    gen.add_argument(
        "--check", action="store_true", help="exit 1 if either is out of date (nothing written)"
    )
    gen.add_argument("--project-dir", type=inputs.project_dir)
    gen.set_defaults(handler=run)


def run(args: argparse.Namespace, project_dir: Path) -> int:
    from hyperpod_dpd.pulumi_yaml.command import run as pulumi_yaml

    return pulumi_yaml(args, project_dir)
