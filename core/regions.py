"""AWS Region names and Availability Zone IDs.

An AZ *ID* (``use2-az2``) names the same physical zone in every account, unlike an AZ *name*
(``us-east-2a``), which AWS maps differently per account. Capacity reservations and training
plans are bought in one physical zone, so the stack takes AZ IDs everywhere.
"""

from __future__ import annotations

import re

# How AWS abbreviates the direction part of a Region name in its AZ IDs
# (us-east-2 -> use2, ap-northeast-1 -> apne1, eu-central-1 -> euc1).
_DIRECTIONS = {
    "east": "e",
    "west": "w",
    "north": "n",
    "south": "s",
    "central": "c",
    "northeast": "ne",
    "northwest": "nw",
    "southeast": "se",
    "southwest": "sw",
}
REGION_PATTERN = r"^[a-z]{2}(-gov)?-[a-z]+-[0-9]+$"
AZ_ID_PATTERN = r"^[a-z]+[0-9]+-az[1-8]$"
# AZs where EKS places no cluster network interfaces: a cluster subnet there fails CreateCluster
# with UnsupportedAvailabilityZoneException (EKS User Guide, "View Amazon EKS networking
# requirements for VPC and subnets", Subnet requirements for clusters: "Your subnets can't
# reside in the following Availability Zones").
EKS_UNSUPPORTED_AZ_IDS = frozenset({"use1-az3", "usw1-az2", "cac1-az3"})


def az_id_prefix(region: str) -> str:
    """The prefix AZ IDs of `region` carry: 'us-east-2' -> 'use2', 'us-gov-west-1' -> 'usgw1'."""
    if not re.match(REGION_PATTERN, region):
        raise ValueError(f"'{region}' is not an AWS Region name like 'us-east-2'")
    parts = region.split("-")
    geo, number = parts[0], parts[-1]
    gov = "g" if parts[1] == "gov" else ""
    direction = _DIRECTIONS.get(parts[-2])
    if direction is None:
        raise ValueError(f"'{region}' has an unknown direction '{parts[-2]}'")
    return f"{geo}{gov}{direction}{number}"


def az_id_in_region(az_id: str, region: str) -> bool:
    return az_id.split("-az")[0] == az_id_prefix(region)


def partition_of(region: str) -> str:
    """The ARN partition of `region`: aws, aws-us-gov or aws-cn."""
    if region.startswith("us-gov-"):
        return "aws-us-gov"
    if region.startswith("cn-"):
        return "aws-cn"
    return "aws"


def region_environment(region: str) -> dict[str, str]:
    """The container environment that names the Region to the AWS SDKs, which a pod kept from
    the instance metadata service (specs/isolation/instance_metadata.py) cannot ask it for.
    Both names: boto3 reads AWS_DEFAULT_REGION (botocore configprovider.py, `'region':
    ('region', 'AWS_DEFAULT_REGION', ...)`), most other SDKs AWS_REGION
    (https://docs.aws.amazon.com/sdkref/latest/guide/feature-region.html)."""
    return {"AWS_REGION": region, "AWS_DEFAULT_REGION": region}
