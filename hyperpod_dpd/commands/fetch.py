"""`hyperpod-dpd fetch`: download the pinned third-party artifacts the stack deploys (the
HyperPod dependencies chart with its sub-charts, the ALB controller's IAM policy) into the
project's `.hyperpod-dpd/`, once, before `pulumi preview` or `pulumi up` (which fetch nothing)."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "fetch", help="download the pinned chart and policy the stack deploys (.hyperpod-dpd/)"
    )
    parser.add_argument("--project-dir", type=Path)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, project_dir: Path) -> int:
    from core.versions import ALB_CONTROLLER_POLICY, HYPERPOD_DEPENDENCIES_CHART
    from hyperpod_dpd.fetch import fetch_chart, fetch_file
    from infra.charts import VendorError

    try:
        chart = fetch_chart(HYPERPOD_DEPENDENCIES_CHART, project_dir)
        policy = fetch_file(ALB_CONTROLLER_POLICY, project_dir)
    except VendorError as exc:
        print(f"error: {exc}")
        return 1
    for path in (chart, policy):
        print(f"  {path.relative_to(project_dir)}")
    return 0
