"""`hyperpod-dpd plan` and `hyperpod-dpd diff`, run: their parsers are hyperpod_dpd/cli/plan.py
and hyperpod_dpd/cli/diff.py."""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from core.collector import collector_paused
from core.exits import EXIT_FAILED, EXIT_OK


def plan(args: argparse.Namespace, project_dir: Path) -> int:
    """Plan the stack, print the text (or JSON) and return the plan's exit code."""
    # A plan builds a large, long-lived heap (SDK modules, the program's resources) and frees
    # next to nothing: the cyclic collector would rescan it over and over for nothing.
    with collector_paused(frozen=False):
        from hyperpod_dpd.offline.planner import make_plan

        made = make_plan(project_dir, args.stack, args.out, preview=args.preview)
    from hyperpod_dpd.offline.summary import plan_json, render_text

    print(json.dumps(plan_json(made), indent=2) if args.format == "json" else render_text(made))
    return made.exit_code


def diff(args: argparse.Namespace, project_dir: Path) -> int:
    """Both sides as plans (git refs planned with their own code), then the diff printed."""
    from hyperpod_dpd.offline.diff import diff_plans
    from hyperpod_dpd.offline.diff_render import render_json, render_markdown, render_text
    from hyperpod_dpd.offline.diff_sides import resolve

    with tempfile.TemporaryDirectory(prefix="hyperpod-dpd-plans-") as work:
        base, head = resolve([args.base, args.head], project_dir, args.stack, Path(work))
        d = diff_plans(base, head)
    text = {"markdown": render_markdown, "text": render_text, "json": render_json}[args.format](d)
    print(text)
    if args.out:
        args.out.write_text(text if text.endswith("\n") else text + "\n")
    # A mandatory finding (the head stack's hyperpod-dpd:policy) fails the pull request's check.
    return EXIT_FAILED if d.mandatory_failures else EXIT_OK
