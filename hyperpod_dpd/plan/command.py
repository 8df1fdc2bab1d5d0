"""`hyperpod-dpd plan`, run: its parser is hyperpod_dpd/cli/plan.py."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.collector import collector_paused
from core.colour import Palette
from core.json_output import dumps


def plan(args: argparse.Namespace, project_dir: Path) -> int:
    """Plan the stack, print the text (or JSON) and return the plan's exit code."""
    # A plan builds a large, long-lived heap (SDK modules, the program's resources) and frees
    # next to nothing: the cyclic collector would rescan it over and over for nothing.
    with collector_paused(frozen=False):
        from hyperpod_dpd.plan.planner import make_plan

        made = make_plan(project_dir, args.stack, args.out, preview=args.preview)
    from hyperpod_dpd.plan.summary import plan_json, render_text

    if args.format == "json":
        print(dumps(plan_json(made)))
    else:
        print(render_text(made, Palette(sys.stdout)))
    return made.exit_code
