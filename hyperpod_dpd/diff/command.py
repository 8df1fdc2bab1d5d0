"""`hyperpod-dpd diff`, run: its parser is hyperpod_dpd/cli/diff.py."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from core.exits import EXIT_FAILED, EXIT_OK


def diff(args: argparse.Namespace, project_dir: Path) -> int:
    """Both sides as plans (git refs planned with their own code), then the diff printed."""
    from hyperpod_dpd.diff.compare import diff_plans
    from hyperpod_dpd.diff.render import render_json, render_markdown, render_text
    from hyperpod_dpd.diff.sides import resolve

    with tempfile.TemporaryDirectory(prefix="hyperpod-dpd-plans-") as work:
        base, head = resolve([args.base, args.head], project_dir, args.stack, Path(work))
        d = diff_plans(base, head)
    text = {"markdown": render_markdown, "text": render_text, "json": render_json}[args.format](d)
    print(text)
    if args.out:
        args.out.write_text(text if text.endswith("\n") else text + "\n")
    # A mandatory finding (the head stack's hyperpod-dpd:policy) fails the pull request's check.
    return EXIT_FAILED if d.mandatory_failures else EXIT_OK
