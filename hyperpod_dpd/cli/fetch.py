"""`hyperpod-dpd fetch`: download the pinned third-party chart the stack deploys (the HyperPod
dependencies chart with its sub-charts) into the project's `.hyperpod-dpd/`, once, before
`pulumi preview` or `pulumi up` (which fetch nothing); with `--stack`, the digest of each image
the stack runs by tag, as the lines that pin it."""

from __future__ import annotations

import argparse
from pathlib import Path

from core import cli_inputs as inputs
from core.cli_help import described


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "fetch",
        help="download the pinned chart the stack deploys (.hyperpod-dpd/)",
        description="Download the pinned third-party chart the stack deploys (the HyperPod "
        "dependencies chart with its sub-charts, digests checked) into .hyperpod-dpd/, once, "
        "before `pulumi preview` or `pulumi up` (which download nothing). With --stack, also "
        "resolve the digest of each image the stack runs by tag and print the lines that pin it.",
    )
    described(
        parser,
        ["hyperpod-dpd fetch", "hyperpod-dpd fetch --stack prod"],
        {0: "fetched (images the registry did not answer for are named)",
         1: "the chart could not be downloaded or did not match its pinned digest",
         2: "bad input: the stack file"},
    )  # fmt: skip
    parser.add_argument(
        "--stack",
        type=inputs.stack_name,
        help="also resolve the digests of the images this stack runs by tag (registry access)",
    )
    parser.add_argument(
        "--project-dir", type=inputs.project_dir, help="directory of Pulumi.yaml (default: found)"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, project_dir: Path) -> int:
    from hyperpod_dpd.fetch.command import run as fetch

    return fetch(args, project_dir)
