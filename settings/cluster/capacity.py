"""Whether the cluster's nodes have room for what runs on them: a system node for the staging
Job's requests, and the VPC's subnets for the nodes' and pods' addresses (core/sizing/node_capacity.py
does the arithmetic over EC2's numbers; core/aws/subnets.py cuts the VPC)."""

from __future__ import annotations

import ipaddress
from collections import Counter

from core.aws.subnets import SubnetPlan, plan_subnets
from core.job_pods import JOB_CPU_REQUEST, JOB_MEMORY_REQUEST_GIB
from core.problems import ConfigProblem
from core.sizing.node_capacity import (
    EVICTION_HARD_MIB,
    NodeAddresses,
    allocatable,
    facts_of,
    holds,
    kube_reserved_mib,
    kube_reserved_millicores,
    max_pods,
    node_addresses,
    smallest_x86_holding,
    usable_addresses,
)
from core.vocabulary import GPU_ROLES
from settings.cluster.groups import InstanceGroups, groups_with_role
from settings.cluster.network import MIN_VPC_PREFIX, NetworkConfig, check_vpc
from settings.config.errors import full_key, set_fix

STAGING_JOB = "the checkpoint staging Job"  # `pulumi up` waits for it: Pending is forever
BENCHMARK_JOB = "the benchmark Job"  # `benchmark run --stack` (hyperpod_dpd/benchmark/job.py)


def check_system_fits_jobs(groups: InstanceGroups, job: str = STAGING_JOB) -> list[ConfigProblem]:
    """Some system group's node holds the requests of the in-cluster Jobs, which run on a system
    node (specs/staging.py, hyperpod_dpd/benchmark/job.py; core/job_pods JOB_*): else `job` stays
    Pending. The stack checks it for the staging Job (with checkpoint.staging job), `benchmark
    run --stack` for its own Job before creating it.

    Allocatable is core/node_capacity's (the EKS AMI's reservations from EC2's nominal memory: an
    upper bound). What the operators and daemon sets already request of the system nodes is not
    counted (no figures to cite): this is a floor, a type refused here surely cannot run the Job.
    A system group of a type without EC2 numbers (core/ec2_instances INSTANCE_FACTS_MISSING) might
    hold it: then nothing is refused."""
    system = groups_with_role(groups, "system")
    known = {n: (g, f) for n, g in system.items() if (f := facts_of(g.instance_type))}
    cpu_m, memory_mib = JOB_CPU_REQUEST * 1000, JOB_MEMORY_REQUEST_GIB * 1024
    if not system or len(known) < len(system):
        return []  # no system group (check_groups), or one whose numbers are unknown
    if any(holds(f, cpu_m, memory_mib) for _, f in known.values()):
        return []
    problems = []
    several = len(system) > 1
    for name, (group, f) in sorted(known.items()):
        room, pods = allocatable(f), max_pods(f)
        key = full_key(("instanceGroups", name, "instanceType"))
        suggested = smallest_x86_holding(cpu_m, memory_mib, like=group.instance_type)
        allowed = (
            f"a type whose allocatable CPU and memory hold {job}'s requests "
            f"({JOB_CPU_REQUEST} CPU, {JOB_MEMORY_REQUEST_GIB} GiB; the Job runs on a "
            f"system node and would stay Pending): {group.instance_type} has "
            f"{room.millicores}m CPU and {room.memory_mib} MiB allocatable ({f.vcpus} vCPUs less "
            f"{kube_reserved_millicores(f.vcpus)}m kube-reserved; {f.memory_mib} MiB less "
            f"{kube_reserved_mib(pods)} MiB kube-reserved for {pods} pods and "
            f"{EVICTION_HARD_MIB} MiB eviction threshold, as the EKS AMI sets them)"
            + ("; no system group's type holds it, one that does is enough" if several else "")
        )
        fix = (
            set_fix(key, suggested)
            if suggested
            else "no x86_64 HyperPod type holds it: lower the requests in core/job_pods.py"
        )
        problems.append(ConfigProblem(key, group.instance_type, allowed, fix))
    return problems


def check_subnet_addresses(
    network: NetworkConfig, availability_zone_id: str, groups: InstanceGroups
) -> list[ConfigProblem]:
    """The GPU subnet holds the addresses of every GPU group's nodes, and the private subnets
    those of the system groups' (core/aws/subnets.py cuts the VPC; core/sizing/node_capacity.py counts a
    node's addresses): HyperPod on EKS uses the Amazon VPC CNI, which gives every pod a VPC
    address, so a subnet too small leaves nodes or pods without one after `pulumi up`.

    The private subnets are compared in total: HyperPod spreads the system nodes over them, and
    an uneven spread needs more. A group of a type without EC2 numbers (core/ec2_instances
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


def largest_count_that_fits(
    network: NetworkConfig, availability_zone_id: str, groups: InstanceGroups, name: str
) -> int:
    """The most nodes group `name` can have beside the other groups before its tier's subnets
    run out of addresses (its instanceCount as it is when that already fits; 0: none fits)."""

    def fits(count: int) -> bool:
        resized = {**groups, name: groups[name].model_copy(update={"instance_count": count})}
        return not _shortfalls(network.vpc_cidr, network, availability_zone_id, resized)

    low, high = 0, groups[name].instance_count
    while low < high:  # fitting only gets harder as the count grows
        mid = (low + high + 1) // 2
        if fits(mid):
            low = mid
        else:
            high = mid - 1
    return low


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
