"""Regenerate core/aws_facts.py: what the pinned botocore (requirements.txt) knows of AWS.

  python scripts/extract_aws_facts.py           # write core/aws_facts.py
  python scripts/extract_aws_facts.py --check   # exit 1 if the committed file differs

The stack settings refuse, before anything is created, what AWS would refuse at `pulumi up`: an
instance type HyperPod does not offer (sagemaker's ClusterInstanceType enum), more instance
groups than CreateCluster takes, a Region outside the partitions botocore knows, an IAM role
name beyond IAM's rules. The facts come from botocore's own service models and endpoint data,
read once here so the settings import no botocore (core stays standard library only).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import botocore
import botocore.session

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "core" / "aws_facts.py"


def render() -> str:
    session = botocore.session.get_session()
    sagemaker = session.get_service_model("sagemaker")
    iam = session.get_service_model("iam")
    instance_types = sorted(sagemaker.shape_for("ClusterInstanceType").enum)
    groups = sagemaker.shape_for("ClusterInstanceGroupSpecifications").metadata
    role_name = iam.shape_for("roleNameType").metadata
    partitions = {
        p["partition"]: sorted(p["regions"]) for p in session.get_data("endpoints")["partitions"]
    }
    lines = [
        '"""What AWS accepts, as the pinned botocore knows it (generated: python',
        f'scripts/extract_aws_facts.py, from botocore {botocore.__version__}; do not edit)."""',
        "",
        f"BOTOCORE_VERSION = {botocore.__version__!r}",
        "# sagemaker ClusterInstanceType: what a HyperPod instance group may be.",
        "HYPERPOD_INSTANCE_TYPES = frozenset(",
        "    (",
        *(f"        {t!r}," for t in instance_types),
        "    )",
        ")",
        "# CreateCluster's InstanceGroups (ClusterInstanceGroupSpecifications).",
        f"MAX_INSTANCE_GROUPS = {groups['max']}",
        "# IAM roleNameType.",
        f"ROLE_NAME_MAX = {role_name['max']}",
        f"ROLE_NAME_PATTERN = {('^' + role_name['pattern'] + '$')!r}",
        "# botocore's endpoint data: the Regions of each partition.",
        "PARTITION_REGIONS = {",
        *(
            f"    {name!r}: frozenset({tuple(regions)!r}),"
            for name, regions in sorted(partitions.items())
        ),
        "}",
        "",
    ]
    # In the project's own format (ruff format, pinned in requirements-dev.txt), so `make lint`
    # and --check agree.
    formatted = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--stdin-filename", str(TARGET), "-"],
        input="\n".join(lines), capture_output=True, text=True, check=True,
    )  # fmt: skip
    return formatted.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = parser.parse_args()
    text = render()
    if args.check:
        stale = not TARGET.exists() or TARGET.read_text() != text
        if stale:
            print(f"{TARGET} is stale: run python scripts/extract_aws_facts.py", file=sys.stderr)
        return 1 if stale else 0
    TARGET.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
