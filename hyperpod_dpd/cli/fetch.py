"""`hyperpod-dpd fetch`: download the pinned third-party chart the stack deploys (the HyperPod
dependencies chart with its sub-charts) into the project's `.hyperpod-dpd/`, once, before
`pulumi preview` or `pulumi up` (which fetch nothing); with `--stack`, the digest of each image
the stack runs by tag, as the lines that pin it."""

from __future__ import annotations

import argparse
from pathlib import Path

from core import cli_inputs as inputs


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "fetch", help="download the pinned chart the stack deploys (.hyperpod-dpd/)"
    )
    parser.add_argument(
        "--stack",
        type=inputs.stack_name,
        help="also resolve the digests of the images this stack runs by tag (registry access)",
    )
    parser.add_argument("--project-dir", type=inputs.project_dir)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, project_dir: Path) -> int:
    from hyperpod_dpd.fetch.command import run as fetch

    return fetch(args, project_dir)
