"""`hyperpod-dpd policy-pack`, run: the pack directory (and its venv) assembled. The parser is
hyperpod_dpd/cli/policy_pack.py."""

from __future__ import annotations

import argparse
from pathlib import Path

from core.exits import EXIT_OK
from hyperpod_dpd.policy.assemble import assemble, build_venv


def run(args: argparse.Namespace, project_dir: Path) -> int:
    out = assemble(args.out or project_dir / "build" / "policy-pack")
    if not args.no_venv:
        build_venv(out)
    print(f"Wrote the policy pack to {out}/: pulumi preview --policy-pack {out}")
    return EXIT_OK
