"""`hyperpod-dpd fetch`, run: the pinned chart downloaded into .hyperpod-dpd/; with
`--stack`, also the digest of each image that stack runs by tag (hyperpod_dpd/fetch/images.py).
The parser is hyperpod_dpd/cli/fetch.py."""

from __future__ import annotations

import argparse
from pathlib import Path

from core.exits import EXIT_FAILED, EXIT_OK
from core.pulumi_commands import naming_stack
from core.versions import HYPERPOD_DEPENDENCIES_CHART
from hyperpod_dpd.fetch.artifacts import fetch_chart
from hyperpod_dpd.fetch.images import DIGESTS_FILE, resolve_images
from infra.charts import VendorError
from settings.stack_file import read_stack


def run(args: argparse.Namespace, project_dir: Path) -> int:
    # The stack is read first: a bad stack file is refused (exit 2) before anything downloads.
    settings = read_stack(project_dir, args.stack).settings if args.stack else None
    try:
        chart = fetch_chart(HYPERPOD_DEPENDENCIES_CHART, project_dir)
    except VendorError as exc:
        print(f"error: {exc}")
        return EXIT_FAILED
    print(f"  {chart.relative_to(project_dir)}")
    if settings is None:
        print("Images: `hyperpod-dpd fetch --stack <stack>` resolves the digests of the images "
              "a stack runs by tag and prints the commands that pin them.")  # fmt: skip
        return EXIT_OK
    lines, failed = resolve_images(settings, project_dir, args.stack)
    print(f"Images of stack '{args.stack}' (digests recorded in {DIGESTS_FILE}); run each "
          f"command to pin its image in Pulumi.{args.stack}.yaml (--path edits the nested key "
          "in place):")  # fmt: skip
    print(naming_stack("\n".join(lines), args.stack))  # each `pulumi config set` for this stack
    if failed:
        print(f"{failed} image(s) not resolved: the chart is fetched; run again where "
              "the registry is in reach, or copy the digest from the registry's console.")  # fmt: skip
    return EXIT_OK
