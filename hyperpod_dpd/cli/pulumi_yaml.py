"""`hyperpod-dpd pulumi-yaml [--check]`: Pulumi.yaml's config block and docs/configuration.md's
config table, regenerated from the typed settings model (settings/declare.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from core import cli_inputs as inputs
from core.cli_help import described


def register(subparsers: argparse._SubParsersAction) -> None:
    gen = subparsers.add_parser(
        "pulumi-yaml",
        help="regenerate Pulumi.yaml's config block and docs/configuration.md's table from the "
        "model",
        description="Regenerate Pulumi.yaml's config block and the configuration table of "
        "docs/configuration.md from the typed settings model (settings/declare.py), after a "
        "change to settings/; --check only compares.",
    )
    described(
        gen,
        ["hyperpod-dpd pulumi-yaml", "hyperpod-dpd pulumi-yaml --check"],
        {0: "written, or (--check) up to date", 1: "--check: either file is out of date",
         2: "bad input: --project-dir"},
    )  # fmt: skip
    gen.add_argument(
        "--check", action="store_true", help="exit 1 if either is out of date (nothing written)"
    )
    gen.add_argument(
        "--project-dir", type=inputs.project_dir, help="directory of Pulumi.yaml (default: found)"
    )
    gen.set_defaults(handler=run)


def run(args: argparse.Namespace, project_dir: Path) -> int:
    from hyperpod_dpd.pulumi_yaml.command import run as pulumi_yaml

    return pulumi_yaml(args, project_dir)
