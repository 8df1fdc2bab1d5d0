"""`hyperpod-dpd fetch`, run: the pinned chart and policy downloaded into .hyperpod-dpd/. The
parser is hyperpod_dpd/cli/fetch.py."""

from __future__ import annotations

import argparse
from pathlib import Path

from core.exits import EXIT_FAILED, EXIT_OK
from core.versions import ALB_CONTROLLER_POLICY, HYPERPOD_DEPENDENCIES_CHART
from hyperpod_dpd.fetch.artifacts import fetch_chart, fetch_file
from infra.charts import VendorError


def run(args: argparse.Namespace, project_dir: Path) -> int:
    try:
        chart = fetch_chart(HYPERPOD_DEPENDENCIES_CHART, project_dir)
        policy = fetch_file(ALB_CONTROLLER_POLICY, project_dir)
    except VendorError as exc:
        print(f"error: {exc}")
        return EXIT_FAILED
    for path in (chart, policy):
        print(f"  {path.relative_to(project_dir)}")
    return EXIT_OK
