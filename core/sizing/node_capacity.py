"""What a HyperPod node offers its pods and takes of its subnet: pure arithmetic over the EC2
numbers of core/aws/ec2_instances.py (INSTANCE_FACTS), so the settings can refuse, before anything is
created, a system group that cannot hold the checkpoint staging Job and a VPC whose subnets
cannot hold the nodes' addresses.

Allocatable is what the Kubernetes scheduler places pods against: capacity minus the kubelet's
reservations. The reservations are those of the EKS AMI's node agent (awslabs/amazon-eks-ami,
nodeadm/internal/kubelet/config.go: withDefaultReservedResources, getCPUMillicoresToReserve,
GetMemoryMebibytesToReserve and defaultKubeletSubConfig's evictionHard; max pods from
nodeadm/internal/kubelet/maxpods/maxpods.go and eni-max-pods.txt). Capacity is the EC2 nominal
memory (MemoryInfo.SizeInMiB), a little above what the kernel reports, so the allocatable here
is an upper bound: a type refused with it is surely too small.

A type INSTANCE_FACTS lacks (INSTANCE_FACTS_MISSING) has no numbers: the functions taking a type
name return None for it, and the checks skip it.
"""

from __future__ import annotations

from typing import NamedTuple

from core.aws.ec2_instances import INSTANCE_FACTS
from core.aws.instance_facts import InstanceFacts

# nodeadm's defaultKubeletSubConfig: evictionHard memory.available "100Mi".
EVICTION_HARD_MIB = 100
# nodeadm's GetMemoryMebibytesToReserve: kube-reserved memory = 11 MiB per pod + 255 MiB.
KUBE_RESERVED_MIB_BASE, KUBE_RESERVED_MIB_PER_POD = 255, 11
# nodeadm's getCPUMillicoresToReserve: of each range of the node's millicores, this share (in
# ten-thousandths): 6% of the first core, 1% of the second, 0.5% of cores 3 and 4, 0.25% above.
_CPU_RANGES = ((0, 1000, 600), (1000, 2000, 100), (2000, 4000, 50), (4000, None, 25))
PREFERRED_FAMILY = "m5"  # the general-purpose family the example stacks' system groups use


def facts_of(instance_type: str) -> InstanceFacts | None:
    """The EC2 numbers of a HyperPod instance type (`ml.` prefix), None when moto lacks it."""
    return INSTANCE_FACTS.get(instance_type)


def max_pods(f: InstanceFacts) -> int:
    """The kubelet's maxPods on the EKS AMI: ENIs x (IPv4 per ENI - 1) + 2, as in nodeadm's
    eni-max-pods.txt (the first address of each ENI is not a pod's; +2 for the host-network
    pods, aws-node and kube-proxy). On multi-card types (p5.48xlarge) only the default network
    card's interfaces count, as the file's note says: p5.48xlarge 2 x 49 + 2 = 100. nodeadm's
    other cap, by memory (maxpods.ApplyLimit), applies only under its opt-in MemoryLimitMaxPods
    feature gate, and is not applied here."""
    return f.default_card_enis * (f.ipv4_per_eni - 1) + 2


def kube_reserved_millicores(vcpus: int) -> int:
    """nodeadm's kube-reserved CPU for a node of `vcpus` CPUs, in millicores (integer
    arithmetic, as nodeadm's getResourceToReserveInRange)."""
    total = vcpus * 1000
    reserved = 0
    for start, end, share in _CPU_RANGES:
        if total > start:
            reserved += (min(total, end or total) - start) * share // 10000
    return reserved


def kube_reserved_mib(pods: int) -> int:
    return KUBE_RESERVED_MIB_BASE + KUBE_RESERVED_MIB_PER_POD * pods


class Allocatable(NamedTuple):
    millicores: int
    memory_mib: int


def allocatable(f: InstanceFacts) -> Allocatable:
    """Capacity minus kube-reserved and the hard eviction threshold (nodeadm sets no
    system-reserved amounts, only its cgroup)."""
    return Allocatable(
        f.vcpus * 1000 - kube_reserved_millicores(f.vcpus),
        f.memory_mib - kube_reserved_mib(max_pods(f)) - EVICTION_HARD_MIB,
    )


def holds(f: InstanceFacts, millicores: int, memory_mib: int) -> bool:
    """A pod requesting `millicores` and `memory_mib` fits an otherwise empty node of `f`."""
    room = allocatable(f)
    return room.millicores >= millicores and room.memory_mib >= memory_mib


def family(instance_type: str) -> str:
    """'ml.m5.4xlarge' -> 'm5'."""
    return instance_type.split(".")[1] if instance_type.count(".") == 2 else ""


def smallest_x86_holding(millicores: int, memory_mib: int, like: str = "") -> str | None:
    """The smallest x86_64 HyperPod instance type (fewest vCPUs, then least memory) whose empty
    node holds the requests: of the family of `like` when one does, else of the m5 family, else
    of any family; None when none does."""
    fitting = [
        (f.vcpus, f.memory_mib, name)
        for name, f in INSTANCE_FACTS.items()
        if f.x86_64 and holds(f, millicores, memory_mib)
    ]
    for wanted in (family(like), PREFERRED_FAMILY, None):
        found = sorted(c for c in fitting if wanted is None or family(c[2]) == wanted)
        if found:
            return found[0][2]
    return None


class NodeAddresses(NamedTuple):
    """The VPC addresses one node takes of its subnet with the Amazon VPC CNI (which HyperPod on
    EKS requires), at its default WARM_ENI_TARGET=1 (aws/amazon-vpc-cni-k8s,
    docs/eni-and-ip-target.md: ipamd keeps "a full ENI" of free addresses)."""

    primary: int  # the primary interface, filled: the node's own address and its pods'
    warm: int  # the CNI's warm interface, filled, attached once a pod takes a primary address
    efa: int  # one per EFA interface (GPU groups only: HyperPod gives them interfaceType efa)

    @property
    def total(self) -> int:
        return self.primary + self.warm + self.efa

    def describe(self) -> str:
        parts = [
            f"{self.primary} on the primary interface (the node's address and its pods')",
            f"{self.warm} on the VPC CNI's warm interface (WARM_ENI_TARGET=1)",
        ]
        if self.efa:
            parts.append(f"{self.efa} on EFA interfaces")
        return ", ".join(parts)


def node_addresses(f: InstanceFacts, efa: bool) -> NodeAddresses:
    """A floor of one node's addresses: two interfaces' worth of IPv4 addresses
    (Ipv4AddressesPerInterface counts each interface's primary address), and with `efa` one
    address per EFA interface (MaximumEfaInterfaces). More pods than the primary interface
    holds attach more interfaces; they are not counted."""
    return NodeAddresses(f.ipv4_per_eni, f.ipv4_per_eni, f.efa_interfaces if efa else 0)


# AWS reserves the first four and the last address of every subnet (Amazon VPC User Guide,
# "Subnet CIDR blocks").
SUBNET_RESERVED_ADDRESSES = 5


def usable_addresses(prefixlen: int) -> int:
    """The addresses of an IPv4 subnet of `prefixlen` that its instances can take."""
    return 2 ** (32 - prefixlen) - SUBNET_RESERVED_ADDRESSES
