"""The network: the VPC, its AZs and NAT gateways, and their checks against the Region."""

from __future__ import annotations

import ipaddress
from collections import Counter
from typing import Literal

from pydantic import Field

from core.node_capacity import NodeAddresses, facts_of, node_addresses, usable_addresses
from core.regions import az_id_in_region, az_id_prefix
from core.subnets import SubnetPlan, plan_subnets
from core.vocabulary import GPU_ROLES
from settings.cluster import InstanceGroups
from settings.errors import ConfigProblem, full_key, set_fix
from settings.fields import AzId, Cidr, SettingsModel

MIN_VPC_PREFIX, MAX_VPC_PREFIX = 16, 20


class NetworkConfig(SettingsModel):
    vpc_cidr: Cidr = Field(
        "10.0.0.0/16",
        description="IPv4 CIDR of the VPC, a /16 to /20. The GPU subnet takes a quarter of it; "
        "the plan refuses a VPC whose subnets cannot hold the nodes' and pods' addresses.",
    )
    control_plane_az_ids: list[AzId] = Field(
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
    if len(set(ids)) < 2 or len(set(ids)) != len(ids):
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


def check_vpc(network: NetworkConfig) -> list[ConfigProblem]:
    """A private VPC CIDR from /16 to /20 (the GPU subnet takes a quarter of it)."""
    key = full_key(("network", "vpcCidr"))
    net = ipaddress.IPv4Network(network.vpc_cidr)  # the model's Cidr type parsed it already
    if not (MIN_VPC_PREFIX <= net.prefixlen <= MAX_VPC_PREFIX) or not net.is_private:
        allowed = f"a private (RFC 1918) network from /{MIN_VPC_PREFIX} to /{MAX_VPC_PREFIX}"
        return [ConfigProblem(key, network.vpc_cidr, allowed, set_fix(key, "10.0.0.0/16"))]
    return []


# --- The subnets against the addresses of the nodes and their pods ---------------------------


def check_subnet_addresses(
    network: NetworkConfig, availability_zone_id: str, groups: InstanceGroups
) -> list[ConfigProblem]:
    """The GPU subnet holds the addresses of every GPU group's nodes, and the private subnets
    those of the system groups' (core/subnets.py cuts the VPC; core/node_capacity.py counts a
    node's addresses): HyperPod on EKS uses the Amazon VPC CNI, which gives every pod a VPC
    address, so a subnet too small leaves nodes or pods without one after `pulumi up`.

    The private subnets are compared in total: HyperPod spreads the system nodes over them, and
    an uneven spread needs more. A group of a type without EC2 numbers (core/aws_facts
    INSTANCE_FACTS_MISSING) is not counted. A VPC CIDR check_vpc refuses, or AZ IDs outside the
    layout (check_zones), leave nothing to check here."""
    if check_vpc(network):
        return []
    key = full_key(("network", "vpcCidr"))
    shortfalls = _shortfalls(network.vpc_cidr, network, availability_zone_id, groups)
    if not shortfalls:
        return []
    vpc = ipaddress.IPv4Network(network.vpc_cidr)
    fix = (
        "even a /16 VPC cannot hold these nodes' addresses: split the groups across stacks or "
        "lower their instanceCount"
    )
    for prefix in range(vpc.prefixlen - 1, MIN_VPC_PREFIX - 1, -1):
        wider = vpc.supernet(new_prefix=prefix)
        if wider.is_private and not _shortfalls(str(wider), network, availability_zone_id, groups):
            fix = (
                f"{set_fix(key, str(wider))} (a wider VPC replaces the network of a deployed stack)"
            )
            break
    allowed = (
        "a VPC whose subnets hold the addresses of the nodes and their pods (the VPC CNI gives "
        "every pod a VPC address): " + "; ".join(shortfalls)
    )
    return [ConfigProblem(key, network.vpc_cidr, allowed, fix)]


def _shortfalls(
    vpc_cidr: str, network: NetworkConfig, availability_zone_id: str, groups: InstanceGroups
) -> list[str]:
    """What each tier's subnets lack with the VPC `vpc_cidr`, one sentence per tier short."""
    try:
        plans = plan_subnets(vpc_cidr, availability_zone_id, network.control_plane_az_ids)
    except ValueError:
        return []  # AZ IDs outside the layout: check_zones reports them
    gpu = {n: g for n, g in groups.items() if g.role in GPU_ROLES}
    system = {n: g for n, g in groups.items() if g.role == "system"}
    sentences = []
    for tier, tier_groups, efa in (("gpu", gpu, True), ("private", system, False)):
        subnets = [p for p in plans if p.tier == tier]
        if not subnets:
            continue  # no control-plane AZ IDs: check_zones reports them
        demand = _demand(tier_groups, efa)
        needed = sum(count * addresses.total for _, count, addresses in demand)
        usable = sum(_usable(p) for p in subnets)
        if needed > usable:
            sentences.append(_shortfall_text(tier, subnets, usable, needed, demand))
    return sentences


def _usable(plan: SubnetPlan) -> int:
    return usable_addresses(ipaddress.IPv4Network(plan.cidr).prefixlen)


def _demand(groups: InstanceGroups, efa: bool) -> list[tuple[str, int, NodeAddresses]]:
    """(instance type, nodes, addresses per node) of `groups`, by type; types without EC2
    numbers left out."""
    counts: Counter[str] = Counter()
    for group in groups.values():
        counts[group.instance_type] += group.instance_count
    return [
        (kind, count, node_addresses(f, efa))
        for kind, count in sorted(counts.items())
        if (f := facts_of(kind)) is not None
    ]


def _shortfall_text(
    tier: str,
    subnets: list[SubnetPlan],
    usable: int,
    needed: int,
    demand: list[tuple[str, int, NodeAddresses]],
) -> str:
    if tier == "gpu":
        where = f"the GPU subnet {subnets[0].cidr} has {usable} usable addresses (AWS reserves 5)"
    else:
        cidrs = ", ".join(p.cidr for p in subnets)
        where = (
            f"the {len(subnets)} private subnets {cidrs} (system groups) have {usable} usable "
            f"addresses ({_usable(subnets[0])} each: AWS reserves 5 of each)"
        )
    nodes = " and ".join(
        f"{count} {kind} need {count * a.total} ({a.total} each: {a.describe()})"
        for kind, count, a in demand
    )
    total = f", {needed} in all" if len(demand) > 1 else ""
    return f"{where}; {nodes}{total}"
