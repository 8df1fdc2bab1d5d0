"""`hyperpod-dpd pulumi-yaml [--check]`: Pulumi.yaml's config block and the README's config
table, regenerated from the typed settings model (settings/stack.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    gen = subparsers.add_parser(
        "pulumi-yaml",
        help="regenerate Pulumi.yaml's config block and README.md's config table from the model",
    )
    gen.add_argument(
        "--check", action="store_true", help="exit 1 if either is out of date (nothing written)"
    )
    gen.add_argument("--project-dir", type=Path)
    gen.set_defaults(handler=run)


def run(args: argparse.Namespace, project_dir: Path) -> int:
    from settings.declare import render_pulumi_yaml, render_readme

    stale = []
    for name, render in (("Pulumi.yaml", render_pulumi_yaml), ("README.md", render_readme)):
        path = project_dir / name
        current = path.read_text()
        wanted = render(current)
        if current != wanted:
            stale.append(name)
            if not args.check:
                path.write_text(wanted)
    if args.check and stale:
        print(f"{', '.join(stale)} out of date: run `make pulumi-yaml`", file=sys.stderr)
        return 1
    return 0
