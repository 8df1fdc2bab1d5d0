"""Any GPU instance type HyperPod offers, with the numbers its workers are sized and scheduled
with: the catalog's five DPD types (core/sizing/catalog.py INSTANCES) and every other type whose EC2
numbers core/aws/ec2_instances.py has (moto's copy of DescribeInstanceTypes: GpuInfo, VCpuInfo,
MemoryInfo, EfaInfo).

A type without those numbers (INSTANCE_FACTS_MISSING), or without an NVIDIA GPU, has no spec and
no worker amounts here: the settings refuse a GPU group of it (settings/placement/gpu_groups.py) rather than
size its workers by a guess. (They once fell back to a p5's 8 GPUs, 96 CPUs and 1024 GiB, which
no ml.g5.12xlarge or ml.p4d.24xlarge node can ever schedule.)
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from core.aws.ec2_instances import INSTANCE_FACTS
from core.sizing.catalog import INSTANCES, InstanceSpec
from core.sizing.node_capacity import facts_of, family, holds
from core.vocabulary import EFA_RESOURCE, GPU_RESOURCE

# Every GPU type of the EC2 data, and those with EFA: what a GPU group may be (every GPU group
# is created with an EFA network interface, specs/hyperpod.py).
GPU_TYPES: tuple[str, ...] = tuple(sorted(t for t, f in INSTANCE_FACTS.items() if f.gpu_count))
EFA_GPU_TYPES: tuple[str, ...] = tuple(t for t in GPU_TYPES if INSTANCE_FACTS[t].efa_interfaces)
# The most GPUs one node of those types has: a worker's TP beyond it fits no node at all.
MAX_GPUS_PER_NODE = max(INSTANCE_FACTS[t].gpu_count for t in EFA_GPU_TYPES)
# A worker takes this share of its node's CPUs and memory: the rest is for the nginx and
# OpenTelemetry sidecars the operator adds and the node's daemons.
WORKER_SHARE = 2


def gpu_spec(instance_type: str | None) -> InstanceSpec | None:
    """The GPU numbers of one node of `instance_type`: the catalog's own for a DPD type, else
    EC2's; None for a type without numbers or without an NVIDIA GPU."""
    if instance_type in INSTANCES:
        return INSTANCES[instance_type]
    f = facts_of(instance_type or "")
    if f is None or not f.gpu_count:
        return None
    return InstanceSpec(
        instance_type or "", f.gpu_model, f.gpu_count, f.gpu_memory_mib, f.vcpus, f.memory_mib,
        f.efa_interfaces,
    )  # fmt: skip


def _worker(spec: InstanceSpec) -> dict[str, int]:
    """One worker's amounts on a node of `spec`, as numbers (memory in GiB)."""
    numbers = {GPU_RESOURCE: spec.gpu_count}
    if spec.efa_interfaces:
        numbers[EFA_RESOURCE] = spec.efa_interfaces
    numbers["cpu"] = spec.vcpus // WORKER_SHARE
    numbers["memory"] = spec.memory_mib // WORKER_SHARE // 1024
    return numbers


def _rendered(numbers: dict[str, int]) -> dict[str, str]:
    """Amounts as a pod's resources carry them: memory in Gi, the others as counts."""
    return {k: f"{n}Gi" if k == "memory" else str(n) for k, n in numbers.items()}


def worker_amounts(instance_type: str) -> dict[str, str] | None:
    """What one worker requests (and is limited to) on a node of `instance_type`: the node's
    GPUs and EFA interfaces, 1/WORKER_SHARE of its vCPUs and memory (whole GiB). None for a type
    gpu_spec has no numbers of.

    A worker owns its node. The share stays within the node's allocatable (capacity less the
    EKS AMI's kube-reserved and eviction threshold, core/sizing/node_capacity.py) on every GPU type;
    tests/core/sizing/test_gpu_types.py checks each. The EFA resource is requested only on a type with
    EFA interfaces: the EFA device plugin advertises none elsewhere, and a request for it would
    leave the pod Pending."""
    spec = gpu_spec(instance_type)
    return None if spec is None else _rendered(_worker(spec))


def pool_amounts(instance_types: Iterable[str]) -> dict[str, str] | None:
    """What one worker of a pool whose pods may land on a node of any of `instance_types`
    requests: each amount the least of the types' worker_amounts, so that it fits a node of
    every one (a pod sized for one type stays Pending on another with fewer EFA interfaces or
    less memory); the EFA resource only when every type has EFA. One type: its worker_amounts.
    None when a type has no numbers (or none is given)."""
    specs = [gpu_spec(t) for t in dict.fromkeys(instance_types)]
    if not specs or None in specs:
        return None
    each = [_worker(spec) for spec in specs]
    return _rendered({k: min(n[k] for n in each) for k in each[0] if all(k in n for n in each)})


def worker_fits_node(instance_type: str) -> bool:
    """The worker's CPU and memory fit an empty node's allocatable (True for a type whose EC2
    numbers are unknown but the catalog has: the catalog's numbers are EC2's)."""
    spec, f = gpu_spec(instance_type), facts_of(instance_type)
    if spec is None or f is None:
        return spec is not None
    numbers = _worker(spec)
    return holds(f, numbers["cpu"] * 1000, numbers["memory"] * 1024)


def gpus_per_node(instance_type: str | None) -> int:
    """The GPUs of one node of `instance_type` (gpu_spec's). 8, every DPD type's, only for no type
    or a type without GPU numbers: the settings refuse a GPU group of such a type
    (settings/placement/gpu_groups.py), so that 8 is only ever printed beside the refusal, never deployed."""
    spec = gpu_spec(instance_type)
    return spec.gpu_count if spec is not None else 8


def size_order(instance_type: str) -> tuple:
    """Smaller first: fewer GPUs, less memory per GPU, fewer vCPUs, less memory."""
    spec = gpu_spec(instance_type)
    if spec is None:
        return (1, instance_type)
    return (0, spec.gpu_count, spec.gpu_memory_mib, spec.vcpus, spec.memory_mib, instance_type)


def nearest(instance_type: str, candidates: Iterable[str]) -> list[str]:
    """`candidates`, nearest to `instance_type` first: those of its family, then the others,
    each smallest first. For a type without EC2 numbers, the candidate of the closest name
    leads (the numbers cannot say what is near)."""
    pool = sorted(set(candidates), key=size_order)
    own = family(instance_type)
    ordered = sorted(pool, key=lambda c: family(c) != own)
    if facts_of(instance_type) is None and instance_type not in INSTANCES:
        close = difflib.get_close_matches(instance_type, ordered, n=1, cutoff=0)
        ordered = close + [c for c in ordered if c not in close]
    return ordered


def compact(types: Iterable[str]) -> str:
    """Type names grouped by family: 'ml.g5.{12,48}xlarge, ml.p5.48xlarge'."""
    sizes: dict[str, list[str]] = {}
    for t in types:
        head, _, size = t.rpartition(".")
        sizes.setdefault(head, []).append(size)
    parts = []
    for head in sorted(sizes):
        numbers = [s.removesuffix("xlarge") for s in sizes[head]]
        if len(numbers) > 1 and all(n.isdigit() for n in numbers):
            parts.append(f"{head}.{{{','.join(sorted(numbers, key=int))}}}xlarge")
        else:
            parts += [f"{head}.{s}" for s in sorted(sizes[head])]
    return ", ".join(parts)
