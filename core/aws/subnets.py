"""Subnet layout of the VPC: pure arithmetic, so it is tested without Pulumi.

The VPC is cut in quarters. Quarter 0 is the GPU subnet: HyperPod gives every pod on a p5 node
a VPC address, so it gets the largest block. Quarter 1 holds one private subnet per
control-plane AZ (EKS control-plane ENIs, system nodes), quarter 2 one public subnet per AZ
(NAT gateways; no load balancer: specs/network.py), quarter 3 stays free for later growth (FSx,
a second GPU subnet). Keys are derived from AZ IDs, never list positions, so adding an AZ does
not renumber (and replace) the others.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Literal

Tier = Literal["gpu", "private", "public"]


@dataclass(frozen=True)
class SubnetPlan:
    key: str  # "gpu-use2-az2", "private-use2-az1", "public-use2-az1"
    tier: Tier
    az_id: str
    cidr: str


def plan_subnets(
    vpc_cidr: str, gpu_az_id: str, control_plane_az_ids: list[str]
) -> list[SubnetPlan]:
    vpc = ipaddress.IPv4Network(vpc_cidr)
    quarters = list(vpc.subnets(prefixlen_diff=2))
    private_blocks = list(quarters[1].subnets(prefixlen_diff=3))  # up to 8 AZs
    public_blocks = list(quarters[2].subnets(prefixlen_diff=3))
    all_azs = sorted({gpu_az_id, *control_plane_az_ids})
    private_azs = sorted(set(control_plane_az_ids))
    if len(all_azs) > len(public_blocks):
        raise ValueError(f"at most {len(public_blocks)} AZs fit this layout, got {len(all_azs)}")
    plans = [SubnetPlan(f"gpu-{gpu_az_id}", "gpu", gpu_az_id, str(quarters[0]))]
    # Slots follow the AZ number (az1 -> slot 0), so a subnet's CIDR does not depend on which
    # other AZs are listed.
    for az in private_azs:
        plans.append(SubnetPlan(f"private-{az}", "private", az, str(private_blocks[_slot(az)])))
    for az in all_azs:
        plans.append(SubnetPlan(f"public-{az}", "public", az, str(public_blocks[_slot(az)])))
    return plans


def _slot(az_id: str) -> int:
    number = int(az_id.rsplit("-az", 1)[1])
    if not 1 <= number <= 8:
        raise ValueError(f"AZ ID '{az_id}': numbers 1 to 8 fit this layout")
    return number - 1
