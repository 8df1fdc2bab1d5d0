"""GPU numbers of any instance type HyperPod offers (core/sizing/gpu_types.py): the catalog's five DPD
types exactly as before, every other GPU type from EC2's numbers, no numbers where EC2's data has
none (no default to fall back to)."""

from __future__ import annotations

import pytest

from core.aws.ec2_instances import INSTANCE_FACTS
from core.sizing.catalog import DPD_INSTANCE_TYPES, INSTANCES
from core.sizing.gpu_types import (
    EFA_GPU_TYPES,
    GPU_TYPES,
    MAX_GPUS_PER_NODE,
    compact,
    gpu_spec,
    gpus_per_node,
    nearest,
    pool_amounts,
    worker_amounts,
    worker_fits_node,
)

GPU, EFA = "nvidia.com/gpu", "vpc.amazonaws.com/efa"


@pytest.mark.parametrize("name", DPD_INSTANCE_TYPES)
def test_the_catalog_types_numbers_are_ec2s(name):
    """The hand-written catalog and the generated EC2 numbers agree: either may size a DPD type."""
    spec, f = INSTANCES[name], INSTANCE_FACTS[name]
    assert (spec.gpu_count, spec.gpu_memory_mib, spec.gpu_model) == (
        f.gpu_count,
        f.gpu_memory_mib,
        f.gpu_model,
    )
    assert (spec.vcpus, spec.memory_mib, spec.efa_interfaces) == (
        f.vcpus,
        f.memory_mib,
        f.efa_interfaces,
    )
    assert gpu_spec(name) is spec


@pytest.mark.parametrize(
    ("name", "amounts"),
    [("ml.p5.48xlarge", ("8", "32", "96", "1024Gi")),
     ("ml.p5e.48xlarge", ("8", "32", "96", "1024Gi")),
     ("ml.p5en.48xlarge", ("8", "16", "96", "1024Gi")),
     ("ml.p6-b200.48xlarge", ("8", "8", "96", "1024Gi")),
     ("ml.p6-b300.48xlarge", ("8", "16", "96", "2048Gi"))],
)  # fmt: skip
def test_the_catalog_types_worker_amounts_are_unchanged(name, amounts):
    """What the shipped stacks render (the DPD types' workers), key order included."""
    assert worker_amounts(name) == dict(zip((GPU, EFA, "cpu", "memory"), amounts, strict=True))


@pytest.mark.parametrize(
    ("name", "amounts"),
    [("ml.g5.12xlarge", {GPU: "4", EFA: "1", "cpu": "24", "memory": "96Gi"}),
     ("ml.p4d.24xlarge", {GPU: "8", EFA: "4", "cpu": "48", "memory": "576Gi"}),
     ("ml.g6e.48xlarge", {GPU: "8", EFA: "4", "cpu": "96", "memory": "768Gi"}),
     # No EFA on the type: no EFA resource asked for (the settings refuse such a GPU group).
     ("ml.g5.4xlarge", {GPU: "1", "cpu": "8", "memory": "32Gi"})],
)  # fmt: skip
def test_a_workers_amounts_are_its_own_types(name, amounts):
    """Not a p5's 8 GPUs, 96 CPUs and 1024 GiB: an ml.g5.12xlarge node has 4 GPUs, 48 vCPUs and
    192 GiB, an ml.p4d.24xlarge 96 vCPUs in all."""
    assert worker_amounts(name) == amounts


@pytest.mark.parametrize("name", ["ml.m5.4xlarge", "ml.trn1.32xlarge", "ml.p6e-gb200.36xlarge"])
def test_no_numbers_without_an_nvidia_gpu_or_ec2_data(name):
    assert gpu_spec(name) is None and worker_amounts(name) is None


def test_a_pool_on_several_types_asks_for_the_least_of_each():
    """A pod sized for a p5 (32 EFA interfaces, 1024 GiB) would stay Pending on an
    ml.g6e.48xlarge node (4, 1536 GiB in all): the pool asks what both have."""
    both = {GPU: "8", EFA: "4", "cpu": "96", "memory": "768Gi"}
    assert pool_amounts(["ml.p5.48xlarge", "ml.g6e.48xlarge"]) == both
    assert pool_amounts(["ml.p5.48xlarge", "ml.p5.48xlarge"]) == worker_amounts("ml.p5.48xlarge")
    assert EFA not in pool_amounts(["ml.p5.48xlarge", "ml.g5.4xlarge"])
    assert pool_amounts(["ml.p5.48xlarge", "ml.p6e-gb200.36xlarge"]) is None
    assert pool_amounts([]) is None


@pytest.mark.parametrize("name", GPU_TYPES)
def test_every_gpu_types_worker_fits_its_node(name):
    """Half the vCPUs and memory stays within allocatable (the EKS AMI's kube-reserved and
    eviction threshold taken off) on every GPU type, the smallest included."""
    assert worker_fits_node(name)


def test_the_gpu_numbers_are_ec2s_gpuinfo():
    assert INSTANCE_FACTS["ml.g5.12xlarge"][-3:] == (4, 22888, "A10G")
    assert INSTANCE_FACTS["ml.p4d.24xlarge"][-3:] == (8, 40960, "A100")
    assert INSTANCE_FACTS["ml.m5.4xlarge"].gpu_count == 0  # no GPU: the defaults
    assert "ml.g5.4xlarge" in GPU_TYPES and "ml.g5.4xlarge" not in EFA_GPU_TYPES
    assert set(DPD_INSTANCE_TYPES) <= set(EFA_GPU_TYPES)
    assert MAX_GPUS_PER_NODE == 8


def test_gpus_per_node_is_the_types_own():
    assert gpus_per_node("ml.g5.12xlarge") == 4
    assert gpus_per_node("ml.g6e.12xlarge") == 4
    assert gpus_per_node("ml.p5.48xlarge") == 8


def test_nearest_is_the_family_first_then_the_smallest():
    candidates = ["ml.p5.48xlarge", "ml.g5.48xlarge", "ml.g6e.8xlarge", "ml.g5.8xlarge"]
    assert nearest("ml.g5.4xlarge", candidates) == [
        "ml.g5.8xlarge", "ml.g5.48xlarge", "ml.g6e.8xlarge", "ml.p5.48xlarge",
    ]  # fmt: skip
    # No numbers: the closest name leads.
    assert nearest("ml.p6e-gb200.36xlarge", DPD_INSTANCE_TYPES)[0] == "ml.p6-b200.48xlarge"


def test_compact_names():
    assert compact(["ml.g5.48xlarge", "ml.g5.12xlarge", "ml.p5.48xlarge"]) == (
        "ml.g5.{12,48}xlarge, ml.p5.48xlarge"
    )
