"""`hyperpod-dpd pulumi-yaml`, run: Pulumi.yaml's config block and docs/configuration.md's config table made
again from the settings model (settings/declare.py), written or (--check) compared. The parser is
hyperpod_dpd/cli/pulumi_yaml.py."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.exits import EXIT_FAILED, EXIT_OK
from settings.declare import render_pulumi_yaml, render_readme


def run(args: argparse.Namespace, project_dir: Path) -> int:
    stale = []
    for name, render in (
        ("Pulumi.yaml", render_pulumi_yaml),
        ("docs/configuration.md", render_readme),
    ):
        path = project_dir / name
        current = path.read_text()
        wanted = render(current)
        if current != wanted:
            stale.append(name)
            if not args.check:
                path.write_text(wanted)
    if args.check and stale:
        print(f"{', '.join(stale)} out of date: run `make pulumi-yaml`", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK
