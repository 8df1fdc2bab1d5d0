"""The network: the VPC, its AZs and NAT gateways, and their checks against the Region."""

from __future__ import annotations

import ipaddress
from typing import Annotated, Literal

from pydantic import Field

from core.problems import ConfigProblem
from core.regions import EKS_UNSUPPORTED_AZ_IDS, az_id_in_region, az_id_prefix
from settings.config.errors import full_key, set_fix
from settings.config.fields import AzId, Cidr, SettingsModel
from settings.config.unique import Once

MIN_VPC_PREFIX, MAX_VPC_PREFIX = 16, 20
# The private ranges of RFC 1918, what the VPC CIDR check names. Not `is_private`: Python counts
# loopback, link-local (169.254/16, the instance metadata's) and 0/8 as private too, and a VPC
# in those cannot route to its own nodes.
# The retention periods CloudWatch Logs takes (PutRetentionPolicy retentionInDays,
# https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_PutRetentionPolicy.html).
LOG_RETENTION_DAYS = (1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827,
                      2192, 2557, 2922, 3288, 3653)  # fmt: skip
RFC_1918 = tuple(
    ipaddress.IPv4Network(block) for block in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")
)


class NetworkConfig(SettingsModel):
    vpc_cidr: Cidr = Field(
        "10.0.0.0/16",
        description="IPv4 CIDR of the VPC, a /16 to /20. The GPU subnet takes a quarter of it; "
        "the plan refuses a VPC whose subnets cannot hold the nodes' and pods' addresses.",
    )
    control_plane_az_ids: Annotated[
        list[AzId], Once("each AZ holds one control-plane subnet and one system subnet")
    ] = Field(
        description="AZ IDs (at least two, distinct) for the EKS control-plane and system "
        "subnets. May include availabilityZoneId.",
    )
    placement_group: bool = Field(
        False,
        description="Create an EC2 cluster placement group and name it in the endpoint's "
        "pdSpec.topologySpec.placementGroup.",
    )
    nat_gateways: Literal["single", "perAz"] = Field(
        "single",
        description="'single': one NAT gateway, in the GPU AZ (cheapest); 'perAz': one per AZ "
        "(survives an AZ outage).",
    )
    flow_logs: bool = Field(
        True,
        description="VPC flow logs of the stack's VPC (accepted and rejected traffic) to a "
        "CloudWatch log group encrypted with a key of the stack.",
    )
    flow_log_retention_days: int = Field(
        90,
        description="Days CloudWatch keeps the flow logs: one of CloudWatch's retention periods "
        f"({', '.join(map(str, LOG_RETENTION_DAYS))}).",
    )


def check_zones(
    network: NetworkConfig, region: str, availability_zone_id: str
) -> list[ConfigProblem]:
    """The GPU AZ and the control-plane AZs are AZ IDs of the Region; EKS needs two AZs."""
    problems = []
    prefix = az_id_prefix(region)
    if not az_id_in_region(availability_zone_id, region):
        key = full_key(("availabilityZoneId",))
        problems.append(
            ConfigProblem(
                key,
                availability_zone_id,
                f"an AZ ID of aws:region {region} ({prefix}-azN)",
                "use the AZ ID where your GPU capacity (training plan, ODCR) is; "
                + set_fix(key, prefix + "-az1"),
            )
        )
    ids = network.control_plane_az_ids
    key = full_key(("network", "controlPlaneAzIds"))
    wrong = [az for az in ids if not az_id_in_region(az, region)]
    if wrong:
        kept = [az for az in ids if az not in wrong]
        example = sorted({*kept, *[f"{prefix}-az{i}" for i in (1, 2, 3)]})[: max(2, len(ids))]
        allowed = f"AZ IDs of aws:region {region} ({prefix}-azN)"
        problems.append(ConfigProblem(key, ids, allowed, set_fix(key, example)))
    problems += _check_eks_zones(ids, prefix)
    if len(set(ids)) < 2:  # a repeated one is settings/config/unique.py's
        example = sorted({f"{prefix}-az1", f"{prefix}-az2"})
        problems.append(
            ConfigProblem(
                key,
                ids,
                "at least two distinct AZ IDs (EKS requires subnets in two AZs)",
                set_fix(key, example),
            )
        )
    return problems


def _check_eks_zones(ids: list[str], prefix: str) -> list[ConfigProblem]:
    """The control-plane AZs hold the EKS cluster's subnets: none in an AZ EKS refuses."""
    refused = [az for az in ids if az in EKS_UNSUPPORTED_AZ_IDS]
    if not refused:
        return []
    taken = {*ids, *EKS_UNSUPPORTED_AZ_IDS}
    spare = iter([f"{prefix}-az{i}" for i in range(1, 9) if f"{prefix}-az{i}" not in taken])
    replaced = [next(spare, az) if az in refused else az for az in ids]
    key = full_key(("network", "controlPlaneAzIds"))
    allowed = (
        f"AZ IDs where EKS can place the cluster's network interfaces, not {', '.join(refused)} "
        "(CreateCluster fails with UnsupportedAvailabilityZoneException there)"
    )
    fix = (
        set_fix(key, replaced)
        + " (or other AZ IDs of the Region: `aws ec2 describe-availability-zones`)"
    )
    return [ConfigProblem(key, ids, allowed, fix)]


def check_flow_logs(network: NetworkConfig) -> list[ConfigProblem]:
    """A retention period CloudWatch Logs takes (it refuses any other)."""
    days = network.flow_log_retention_days
    if days in LOG_RETENTION_DAYS:
        return []
    key = full_key(("network", "flowLogRetentionDays"))
    nearest = min(LOG_RETENTION_DAYS, key=lambda d: (abs(d - days), -d))
    allowed = "one of CloudWatch Logs' retention periods: " + ", ".join(
        map(str, LOG_RETENTION_DAYS)
    )
    return [ConfigProblem(key, days, allowed, set_fix(key, nearest))]


def check_vpc(network: NetworkConfig) -> list[ConfigProblem]:
    """A private VPC CIDR from /16 to /20 (the GPU subnet takes a quarter of it)."""
    key = full_key(("network", "vpcCidr"))
    net = ipaddress.IPv4Network(network.vpc_cidr)  # the model's Cidr type parsed it already
    private = any(net.subnet_of(block) for block in RFC_1918)
    if not (MIN_VPC_PREFIX <= net.prefixlen <= MAX_VPC_PREFIX) or not private:
        allowed = f"a private (RFC 1918) network from /{MIN_VPC_PREFIX} to /{MAX_VPC_PREFIX}"
        return [ConfigProblem(key, network.vpc_cidr, allowed, set_fix(key, "10.0.0.0/16"))]
    return []


# --- The subnets against the addresses of the nodes and their pods ---------------------------
