"""The node arithmetic (core/sizing/node_capacity.py) against numbers known independently of it: EC2's
published instance data, the EKS AMI's eni-max-pods.txt and the kube-reserved values EKS nodes
report (kubectl describe node: m5.large allocatable 1930m CPU, 574Mi kube-reserved memory)."""

from __future__ import annotations

import pytest

from core.aws.aws_facts import HYPERPOD_INSTANCE_TYPES
from core.aws.ec2_instances import INSTANCE_FACTS, INSTANCE_FACTS_MISSING
from core.sizing.node_capacity import (
    allocatable,
    facts_of,
    family,
    holds,
    kube_reserved_mib,
    kube_reserved_millicores,
    max_pods,
    node_addresses,
    smallest_x86_holding,
    usable_addresses,
)


def test_m5_large_as_ec2_publishes_it():
    """m5.large: 2 vCPUs, 8 GiB, 3 network interfaces of 10 IPv4 addresses each."""
    f = facts_of("ml.m5.large")
    assert f is not None
    assert (f.vcpus, f.memory_mib, f.max_enis, f.ipv4_per_eni, f.efa_interfaces, f.x86_64) == (
        2, 8192, 3, 10, 0, True,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("instance_type", "pods"),
    # eni-max-pods.txt (awslabs/amazon-eks-ami, nodeadm/internal/kubelet)
    [("ml.m5.large", 29), ("ml.m5.xlarge", 58), ("ml.m5.4xlarge", 234), ("ml.t3.medium", 17),
     ("ml.c5.18xlarge", 737), ("ml.p5.48xlarge", 100), ("ml.p5e.48xlarge", 100),
     ("ml.p5en.48xlarge", 198)],
)  # fmt: skip
def test_max_pods_as_the_eks_ami_lists_them(instance_type, pods):
    f = facts_of(instance_type)
    assert f is not None and max_pods(f) == pods


@pytest.mark.parametrize(
    ("vcpus", "millicores"), [(1, 60), (2, 70), (4, 80), (8, 90), (16, 110), (192, 550)]
)
def test_kube_reserved_cpu_as_nodeadm_computes_it(vcpus, millicores):
    # 6% of the first core, 1% of the second, 0.5% of the next two, 0.25% of the rest.
    assert kube_reserved_millicores(vcpus) == millicores


def test_allocatable_of_small_general_purpose_nodes():
    # m5.large: 2000m - 70m; 8192 MiB - (255 + 11 x 29) MiB - 100 MiB eviction.
    assert kube_reserved_mib(29) == 574
    assert tuple(allocatable(facts_of("ml.m5.large"))) == (1930, 7518)
    # m5.xlarge: 4000m - 80m (short of 4 CPUs); 16384 - 893 - 100 MiB.
    assert tuple(allocatable(facts_of("ml.m5.xlarge"))) == (3920, 15391)
    assert tuple(allocatable(facts_of("ml.m5.2xlarge"))) == (7910, 31775)


@pytest.mark.parametrize(
    ("instance_type", "fits"),
    [("ml.t3.medium", False), ("ml.m5.large", False), ("ml.m5.xlarge", False),
     ("ml.c5.xlarge", False), ("ml.c5.2xlarge", True), ("ml.m5.2xlarge", True),
     ("ml.m5.4xlarge", True)],
)  # fmt: skip
def test_which_nodes_hold_four_cpus_and_8_gib(instance_type, fits):
    assert holds(facts_of(instance_type), 4000, 8192) is fits


@pytest.mark.parametrize(
    ("like", "suggested"),
    [("ml.m5.large", "ml.m5.2xlarge"), ("ml.c5.xlarge", "ml.c5.2xlarge"),
     ("ml.t3.medium", "ml.t3.2xlarge"), ("ml.m7g.large", "ml.m5.2xlarge"), ("", "ml.m5.2xlarge")],
)  # fmt: skip
def test_the_smallest_x86_type_that_holds_the_requests(like, suggested):
    """Of the given type's family when one fits (and x86_64: Graviton families fall to m5)."""
    assert smallest_x86_holding(4000, 8192, like) == suggested
    assert smallest_x86_holding(10**9, 8192) is None


def test_node_addresses():
    p5 = node_addresses(facts_of("ml.p5.48xlarge"), efa=True)
    assert (p5.primary, p5.warm, p5.efa, p5.total) == (50, 50, 32, 132)
    m5 = node_addresses(facts_of("ml.m5.4xlarge"), efa=False)
    assert (m5.total, m5.efa) == (60, 0)
    assert "32 on EFA interfaces" in p5.describe() and "EFA" not in m5.describe()


def test_usable_addresses_of_a_subnet():
    # AWS reserves 5 addresses per subnet: a /24 has 251 usable, a /22 1019.
    assert (usable_addresses(24), usable_addresses(22), usable_addresses(18)) == (251, 1019, 16379)


def test_every_hyperpod_type_has_facts_or_is_listed_missing():
    assert set(INSTANCE_FACTS) | INSTANCE_FACTS_MISSING == HYPERPOD_INSTANCE_TYPES
    assert "ml.p6e-gb200.36xlarge" in INSTANCE_FACTS_MISSING
    assert facts_of("ml.p6e-gb200.36xlarge") is None
    assert family("ml.p6e-gb200.36xlarge") == "p6e-gb200"
