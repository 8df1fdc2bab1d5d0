"""`hyperpod-dpd policy-config`, run: the CrossGuard pack's config (policies/pack.py
`pack_config`) for the stack's `hyperpod-dpd:policy`. The parser is
hyperpod_dpd/cli/policy_config.py."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from core.exits import EXIT_OK
from policies.pack import pack_config
from settings.stack_file import read_stack


def run(args: argparse.Namespace, project_dir: Path) -> int:
    policy = read_stack(project_dir, args.stack).settings.policy
    text = json.dumps(pack_config(policy.enforcement, policy.advisories_mandatory), indent=2)
    if args.out:
        args.out.write_text(text + "\n")
    else:
        print(text)
    return EXIT_OK
