"""Regenerate core/aws/aws_facts.py and core/aws/ec2_instances.py: what the pinned botocore
(requirements.txt) and moto (requirements-dev.txt) know of AWS.

  python scripts/extract_aws_facts.py           # write both files
  python scripts/extract_aws_facts.py --check   # exit 1 if a committed file differs

The stack settings refuse, before anything is created, what AWS would refuse at `pulumi up`: an
instance type HyperPod does not offer (sagemaker's ClusterInstanceType enum), more instance
groups than CreateCluster takes, a Region outside the partitions botocore knows, an IAM role
name beyond IAM's rules. The facts come from botocore's own service models and endpoint data,
read once here so the settings import no botocore (core stays standard library only).

The EC2 numbers of each of those instance types (vCPUs, memory, network interfaces, IPv4
addresses per interface, EFA interfaces, architecture, the primary interface's baseline
bandwidth, the instance store's size and NVMe support, and the count, memory and name of its
NVIDIA GPUs) come from moto's bundled copy of EC2's DescribeInstanceTypes
(moto/ec2/resources/instance_types.json.gz, keyed by the EC2 name, without `ml.`): the settings
check with them that a system node holds the staging Job and that the subnets hold the nodes'
addresses (core/sizing/node_capacity.py), and size a GPU group's workers on any GPU type
(core/sizing/gpu_types.py). A type moto does not know is left out of INSTANCE_FACTS (listed in
INSTANCE_FACTS_MISSING): the capacity checks skip it, a GPU group of that type is refused.
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import botocore
import botocore.session
import moto

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a file from any directory, installed or not

from core.aws.instance_facts import InstanceFacts  # noqa: E402

TARGET = ROOT / "core" / "aws" / "aws_facts.py"  # botocore's facts
EC2_TARGET = (
    ROOT / "core" / "aws" / "ec2_instances.py"
)  # moto's EC2 numbers of those instance types


def ec2_instance_types() -> dict[str, dict[str, Any]]:
    """moto's DescribeInstanceTypes data: EC2 instance type name -> its InstanceTypeInfo."""
    path = Path(moto.__file__).parent / "ec2" / "resources" / "instance_types.json.gz"
    with gzip.open(path, "rt") as f:
        return json.load(f)


def instance_facts(info: dict[str, Any]) -> InstanceFacts:
    network = info["NetworkInfo"]
    cards = {c["NetworkCardIndex"]: c for c in network.get("NetworkCards", [])}
    default_card = cards.get(network.get("DefaultNetworkCardIndex", 0))
    # Only NVIDIA GPUs count: the workers request nvidia.com/gpu (NVIDIA's device plugin).
    storage = info.get("InstanceStorageInfo", {})
    gpus = [g for g in info.get("GpuInfo", {}).get("Gpus", []) if g["Manufacturer"] == "NVIDIA"]
    if len({(g["Name"], g["MemoryInfo"]["SizeInMiB"]) for g in gpus}) > 1:
        # One kind per type in every type moto knows; a mixed one would need a per-GPU table.
        raise SystemExit(f"{info['InstanceType']}: GPUs of more than one kind: {gpus}")
    return InstanceFacts(
        vcpus=info["VCpuInfo"]["DefaultVCpus"],
        memory_mib=info["MemoryInfo"]["SizeInMiB"],
        max_enis=network["MaximumNetworkInterfaces"],
        default_card_enis=(
            default_card["MaximumNetworkInterfaces"]
            if default_card
            else network["MaximumNetworkInterfaces"]
        ),
        ipv4_per_eni=network["Ipv4AddressesPerInterface"],
        efa_interfaces=network.get("EfaInfo", {}).get("MaximumEfaInterfaces", 0),
        x86_64="x86_64" in info["ProcessorInfo"]["SupportedArchitectures"],
        network_gbps=(default_card or network["NetworkCards"][0])["BaselineBandwidthInGbps"],
        instance_store_gb=storage.get("TotalSizeInGB", 0),
        instance_store_nvme=storage.get("NvmeSupport", "unsupported") in ("required", "supported"),
        gpu_count=sum(g["Count"] for g in gpus),
        gpu_memory_mib=gpus[0]["MemoryInfo"]["SizeInMiB"] if gpus else 0,
        gpu_model=gpus[0]["Name"] if gpus else "",
    )


def _facts_text(f: InstanceFacts) -> str:
    """I(...) with every field; without the GPU fields, at their defaults, for a type that has
    no GPU."""
    fields = tuple(f) if f.gpu_count else tuple(f)[: InstanceFacts._fields.index("gpu_count")]
    return f"I{fields!r}"


def _anchored(pattern: str) -> str:
    """A service model's pattern as the service applies it: to the whole value."""
    return "^" + pattern.removeprefix("^").removesuffix("$") + "$"


def render() -> dict[Path, str]:
    """Each generated file and its text."""
    session = botocore.session.get_session()
    sagemaker = session.get_service_model("sagemaker")
    iam = session.get_service_model("iam")
    instance_types = sorted(sagemaker.shape_for("ClusterInstanceType").enum)
    groups = sagemaker.shape_for("ClusterInstanceGroupSpecifications").metadata
    role_name = iam.shape_for("roleNameType").metadata
    eks = session.get_service_model("eks")
    hyperpod_name = sagemaker.operation_model("CreateCluster").input_shape.members["ClusterName"]
    eks_name = eks.operation_model("CreateCluster").input_shape.members["name"]
    partitions = {
        p["partition"]: sorted(p["regions"]) for p in session.get_data("endpoints")["partitions"]
    }
    ec2 = ec2_instance_types()
    facts = {t: instance_facts(ec2[t[3:]]) for t in instance_types if t[3:] in ec2}
    missing = [t for t in instance_types if t not in facts]
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
        f"ROLE_NAME_PATTERN = {_anchored(role_name['pattern'])!r}",
        "# sagemaker CreateCluster's ClusterName and eks CreateCluster's name (both anchored here).",
        f"HYPERPOD_CLUSTER_NAME_MAX = {hyperpod_name.metadata['max']}",
        f"HYPERPOD_CLUSTER_NAME_PATTERN = {_anchored(hyperpod_name.metadata['pattern'])!r}",
        f"EKS_CLUSTER_NAME_MAX = {eks_name.metadata['max']}",
        f"EKS_CLUSTER_NAME_PATTERN = {_anchored(eks_name.metadata['pattern'])!r}",
        "# botocore's endpoint data: the Regions of each partition.",
        "PARTITION_REGIONS = {",
        *(
            f"    {name!r}: frozenset({tuple(regions)!r}),"
            for name, regions in sorted(partitions.items())
        ),
        "}",
        "",
    ]
    ec2_lines = [
        '"""The EC2 numbers of the HyperPod instance types (core/aws/aws_facts.py), as the pinned moto\'s',
        "copy of EC2's DescribeInstanceTypes has them (generated: python",
        f'scripts/extract_aws_facts.py, from moto {moto.__version__}; do not edit)."""',
        "",
        "from core.aws.instance_facts import InstanceFacts as I",
        "",
        f"MOTO_VERSION = {moto.__version__!r}",
        "# EC2 DescribeInstanceTypes (moto's copy), per HyperPod instance type: I(vcpus,",
        "# memory_mib, max_enis, default_card_enis, ipv4_per_eni, efa_interfaces, x86_64,",
        "# network_gbps, instance_store_gb, instance_store_nvme), and for",
        "# a type with NVIDIA GPUs (gpu_count, gpu_memory_mib per GPU, gpu_model) after them.",
        "INSTANCE_FACTS = {",
        *(f"    {t!r}: {_facts_text(f)}," for t, f in sorted(facts.items())),
        "}",
        "# HyperPod instance types moto's data does not have: the capacity checks skip them, a GPU",
        "# group of one is refused (core/sizing/gpu_types.py).",
        f"INSTANCE_FACTS_MISSING = frozenset({tuple(missing)!r})",
        "",
    ]
    return {TARGET: _formatted(TARGET, lines), EC2_TARGET: _formatted(EC2_TARGET, ec2_lines)}


def _formatted(target: Path, lines: list[str]) -> str:
    """In the project's own format (ruff format, pinned in requirements-dev.txt), so `make lint`
    and --check agree."""
    formatted = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--stdin-filename", str(target), "-"],
        input="\n".join(lines), capture_output=True, text=True, check=True,
    )  # fmt: skip
    return formatted.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = parser.parse_args()
    files = render()
    if args.check:
        stale = [t for t, text in files.items() if not t.exists() or t.read_text() != text]
        for target in stale:
            print(f"{target} is stale: run python scripts/extract_aws_facts.py", file=sys.stderr)
        return 1 if stale else 0
    for target, text in files.items():
        target.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
