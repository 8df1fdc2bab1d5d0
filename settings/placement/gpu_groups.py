"""The GPU groups' instance types: each must be a type whose numbers the project has (EC2's, in
core/aws/ec2_instances.py), with NVIDIA GPUs and EFA, and the groups a colocated pool runs on must
hold its workers: as many GPUs as its tensor parallel size, of enough memory to hold the model at
all. Each refusal names the group's instanceType and the nearest type that serves.

Why here, before anything exists: the workers' requests are the type's own numbers (all its
GPUs and EFA interfaces, half its CPUs and memory: core/sizing/gpu_types.py), so a type without numbers
cannot be sized, and a worker that needs more GPUs than a node has is never scheduled. Every GPU
group is created with an EFA network interface (specs/hyperpod.py; the hyperpod-dpd-efa policy
requires it), which EC2 attaches only to types that support EFA (EfaInfo). What a type can hold
at other settings (a --gpu-memory-utilization, a TP up to its GPUs, a shorter context) is for the
gpu-memory and tensor-parallel policies, which judge every GPU type alike (policies/rules/views.py).

DPD's prefill and decode pools run only on the catalog's five types (the instance-type policy),
where those policies judge them: their groups are held here to the first three rules only.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.aws.aws_facts import HYPERPOD_INSTANCE_TYPES
from core.aws.ec2_instances import MOTO_VERSION
from core.problems import ConfigProblem
from core.sizing.catalog import (
    DPD_INSTANCE_TYPES,
    GIB,
    InstanceSpec,
    ModelSpec,
    SizingError,
    load_model,
)
from core.sizing.gpu_memory import worker_fit
from core.sizing.gpu_types import EFA_GPU_TYPES, MAX_GPUS_PER_NODE, compact, gpu_spec, nearest
from core.sizing.node_capacity import facts_of
from core.sizing.report import tp_choices
from core.vocabulary import DPD_ROLES
from settings.cluster.groups import InstanceGroups, gpu_groups
from settings.config.errors import full_key, set_fix
from settings.endpoint.entries import EndpointEntry, placement
from settings.endpoint.numbers import Given


@dataclass(frozen=True)
class Workers:
    """One colocated pool's workers as they will run (settings/endpoint/numbers.py: the settings, or the
    role args that override them): what a type must hold."""

    who: str  # the endpoint, as the messages name it: "endpoints.baseline" or "the endpoint"
    model: ModelSpec
    tp: Given  # with where the user sets it, as a fix names it
    utilization: float
    max_model_len: int


def check_gpu_group_types(
    groups: InstanceGroups, listed: list[EndpointEntry]
) -> list[ConfigProblem]:
    """One problem per GPU group whose type its workers cannot run on, naming every reason."""
    alone = len(listed) == 1
    dpd = any(x.config.mode == "dpd" for x in listed)
    problems = []
    for name, group in sorted(gpu_groups(groups).items()):
        if group.instance_type not in HYPERPOD_INSTANCE_TYPES:
            continue  # check_aws_limits names the types HyperPod offers
        workers = _workers_on(name, groups, listed, alone)
        reasons = lacks(group.instance_type, workers)
        if reasons:
            # A DPD role's group, beside a DPD endpoint, must be a DPD type (instance-type policy).
            types = DPD_INSTANCE_TYPES if dpd and group.role in DPD_ROLES else EFA_GPU_TYPES
            problems.append(_problem(name, group.instance_type, reasons, workers, types))
    return problems


def _workers_on(
    name: str, groups: InstanceGroups, listed: list[EndpointEntry], alone: bool
) -> list[Workers]:
    """The colocated pools that run on group `name`, with numbers the other checks accept (a
    model that does not load, or numbers they refuse, are theirs to report)."""
    found = []
    for entry in listed:
        if "colocated" not in entry.pools():
            continue
        if name not in placement(entry, "colocated", groups, alone):
            continue
        try:
            model = load_model(entry.config.model)
        except SizingError:
            continue  # check_sizing_inputs reports it
        if entry.numbers.problems:
            continue  # settings/endpoint/number_checks.py reports them
        pool = entry.numbers.pools["colocated"]
        who = "the endpoint" if entry.key is None else f"endpoints.{entry.key}"
        utilization, max_len = pool.gpu_memory_utilization.value, pool.max_model_len.value
        found.append(Workers(who, model, pool.tensor_parallel_size, utilization, max_len))
    return found


def lacks(instance_type: str, workers: list[Workers]) -> list[str]:
    """What `instance_type` lacks to run a GPU group holding `workers`; [] when nothing."""
    spec = gpu_spec(instance_type)
    if spec is None:
        if facts_of(instance_type) is None:
            return [
                f"{instance_type} is not in the EC2 data the workers are sized with "
                f"(core/aws/ec2_instances.py, moto {MOTO_VERSION}'s DescribeInstanceTypes): its "
                "GPUs, CPUs, memory and EFA interfaces are unknown, and the workers' requests "
                "are those numbers"
            ]
        return [
            f"{instance_type} has no NVIDIA GPU (EC2 GpuInfo): the vLLM workers are CUDA "
            "programs and request nvidia.com/gpu"
        ]
    reasons = []
    if not spec.efa_interfaces:
        reasons.append(
            f"{instance_type} has no EFA (EC2 EfaSupported false): every GPU group is created "
            "with an EFA network interface (the hyperpod-dpd-efa policy requires it)"
        )
    for w in workers:
        reasons += _cannot_hold(spec, w)
    return reasons


def _cannot_hold(spec: InstanceSpec, w: Workers) -> list[str]:
    """Why a node of `spec` cannot run `w`'s worker at any utilization or TP it allows."""
    reasons = []
    # Only a type's fault when some type has that many GPUs: a TP beyond every node is the TP
    # key's problem (check_sizing_inputs), not the type's.
    if spec.gpu_count < w.tp.value <= MAX_GPUS_PER_NODE:
        reasons.append(
            f"{w.tp.where} ({w.tp.value}) spreads each worker of {w.who} over {w.tp.value} GPUs "
            f"of one node (a worker is one pod), and {spec.name} has {_gpus(spec.gpu_count)}"
        )
    best = max(tp_choices(w.model, spec))  # 1 always divides: never empty
    fit = worker_fit("decode", w.model, spec, best, w.max_model_len, 0)
    if not fit.possible:
        allows = "allows" if spec.gpu_count == 1 else "allow"
        reasons.append(
            f"{w.who}'s model {w.model.name} needs {fit.need_bytes / GIB:.1f} GiB per GPU "
            f"inside vLLM's share (weights, activations, the KV cache of one "
            f"{w.max_model_len}-token sequence) and {fit.outside_bytes / GIB:.1f} GiB beside it "
            f"even at TP {best}, the most {spec.name}'s {_gpus(spec.gpu_count)} {allows}: more "
            f"than each {spec.gpu_model}'s {spec.gpu_memory_bytes / GIB:.1f} GiB"
        )
    return reasons


def _holds_as_set(instance_type: str, workers: list[Workers]) -> bool:
    """Every worker starts on `instance_type` at its own TP and utilization (the gpu-memory
    policy then has nothing to say either)."""
    spec = gpu_spec(instance_type)
    return spec is not None and all(
        w.tp.value <= spec.gpu_count
        and worker_fit("decode", w.model, spec, w.tp.value, w.max_model_len, 0).holds(w.utilization)
        for w in workers
    )


def _problem(
    name: str, itype: str, reasons: list[str], workers: list[Workers], types: tuple[str, ...]
) -> ConfigProblem:
    key = full_key(("instanceGroups", name, "instanceType"))
    serving = [t for t in types if not lacks(t, workers)]
    holding = [t for t in serving if _holds_as_set(t, workers)]
    ranked = nearest(itype, holding) + nearest(itype, [t for t in serving if t not in holding])
    if facts_of(itype) is None:
        reasons = [f"{reasons[0]}; the types it knows that a GPU group may be: {compact(types)}"]
    allowed = "a type the group's workers run on: " + "; ".join(reasons)
    if ranked:
        fix = f"use the nearest type that does: {set_fix(key, ranked[0])}"
        return ConfigProblem(key, itype, allowed, fix)
    return ConfigProblem(key, itype, allowed, _no_type_fix(itype, workers))


def _gpus(count: int) -> str:
    return f"{count} GPU{'s' * (count != 1)}"


def _no_type_fix(itype: str, workers: list[Workers]) -> str:
    """No type serves: a TP the current type takes when that is all it lacks, else what to
    change besides the type."""
    spec = gpu_spec(itype)
    if spec is not None and spec.efa_interfaces:
        for w in workers:
            best = max(tp_choices(w.model, spec))
            if (
                w.tp.value > spec.gpu_count
                and worker_fit("decode", w.model, spec, best, w.max_model_len, 0).possible
            ):
                return w.tp.set_to(best)
    return (
        "no HyperPod GPU type with EFA holds these workers: serve a smaller model (or an FP8 "
        "checkpoint of it), or lower the endpoint's maxModelLen"
    )
