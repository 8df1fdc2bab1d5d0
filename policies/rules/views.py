"""Reading the resources the engine sees (camelCase props) the way the rules need them.

Everything here is plain data in, plain data out: the same functions serve the offline plan
(mock-recorded inputs) and the CrossGuard pack (preview props). Values unknown at preview time
arrive as None or a placeholder string; readers return None for them and rules skip the check.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from core.sizing.catalog import GIB, SizingError, load_model
from core.sizing.gpu_types import gpu_spec
from core.vllm.vllm_args import VLLM_MAX_NUM_SEQS, VLLM_UTILIZATION, flag_value, merge_args
from core.vllm.worker_facts import NUMBER_FLAGS, RoleNumbers, WorkerFacts
from core.vocabulary import (
    ANNOTATION_PREFIX,
    DPD_ROLES,
    GPU_ROLES,
    HYPERPOD_CLUSTER_TYPE,
    IEC_TYPE,
    PROJECT,
    ROLE_LABEL,
    endpoint_config_path,
)
from policies.rules.base import Finding, ResourceView

ROLE_SPECS = {"prefill": "prefillSpec", "decode": "decodingSpec"}


def of_type(resources: Sequence[ResourceView], type_: str) -> Iterator[ResourceView]:
    return (r for r in resources if r.type == type_)


def endpoints(resources: Sequence[ResourceView]) -> Iterator[ResourceView]:
    return of_type(resources, IEC_TYPE)


def spec(iec: ResourceView) -> Mapping[str, Any]:
    return iec.props.get("spec") or {}


def pd_spec(iec: ResourceView) -> Mapping[str, Any] | None:
    return spec(iec).get("pdSpec")


_AUTOSCALING = (("prefill", "prefillAutoScaling"), ("decode", "decodingAutoScaling"))


def scaled_pools(iec: ResourceView) -> list[tuple[str, Mapping[str, Any]]]:
    """(pool, its AutoScaling) of each autoscaled pool: prefill and decode, or colocated."""
    pd = pd_spec(iec)
    if pd is None:
        auto = spec(iec).get("autoScalingSpec")
        return [("colocated", auto)] if auto else []
    scaling = pd.get("autoScalingSpec") or {}
    return [(pool, scaling[key]) for pool, key in _AUTOSCALING if scaling.get(key)]


def annotation(iec: ResourceView, name: str) -> str | None:
    notes = (iec.props.get("metadata") or {}).get("annotations") or {}
    value = notes.get(ANNOTATION_PREFIX + name)
    return value if isinstance(value, str) else None


def env(iec: ResourceView) -> dict[str, Any]:
    """Worker environment (applied identically to prefill and decode pods)."""
    out = {}
    for e in spec(iec).get("worker", {}).get("environmentVariables") or []:
        out[e.get("name")] = e.get("value", e.get("valueFrom"))
    return out


def worker_args(iec: ResourceView) -> list[str]:
    return [str(a) for a in spec(iec).get("worker", {}).get("args") or []]


def role_spec(iec: ResourceView, role: str) -> Mapping[str, Any]:
    return (pd_spec(iec) or {}).get(ROLE_SPECS[role]) or {}


def effective_args(iec: ResourceView, role: str) -> list[str]:
    """What vLLM runs with on `role` (the operator's merge of role args into worker args)."""
    if pd_spec(iec) is None:
        return worker_args(iec)
    return merge_args(worker_args(iec), [str(a) for a in role_spec(iec, role).get("args") or []])


def role_resources(iec: ResourceView, role: str) -> Mapping[str, Any]:
    if pd_spec(iec) is None:
        return spec(iec).get("worker", {}).get("resources") or {}
    return role_spec(iec, role).get("resources") or {}


def instance_types(iec: ResourceView) -> list[str]:
    s = spec(iec)
    if s.get("instanceType"):
        return [s["instanceType"]]
    return [t for t in s.get("instanceTypes") or [] if isinstance(t, str)]


def hyperpod_groups(resources: Sequence[ResourceView]) -> Iterator[tuple[ResourceView, dict]]:
    for cluster in of_type(resources, HYPERPOD_CLUSTER_TYPE):
        for group in cluster.props.get("instanceGroups") or []:
            yield cluster, group


def group_role(group: Mapping[str, Any]) -> str | None:
    labels = (group.get("kubernetesConfig") or {}).get("labels") or {}
    return labels.get(ROLE_LABEL)


def group_name(group: Mapping[str, Any]) -> str | None:
    """The group's name: its key under hyperpod-dpd:instanceGroups (specs/hyperpod.py)."""
    return group.get("instanceGroupName")


def group_key(name: str | None, *rest: str) -> str:
    return f"{PROJECT}:" + ".".join(("instanceGroups", name or "<group>", *rest))


def gpu_groups(resources: Sequence[ResourceView]) -> Iterator[tuple[ResourceView, dict]]:
    """HyperPod groups of GPU roles (labelled prefill, decode or colocated by this stack)."""
    return ((c, g) for c, g in hyperpod_groups(resources) if group_role(g) in GPU_ROLES)


UNKNOWN = "[unknown]"  # what the plan and the pack put where the engine sends an unknown
SECRET = "[secret]"


def known(value: Any) -> bool:
    """False for values the engine does not know yet (preview of a first deployment)."""
    return value is not None and value not in (UNKNOWN, SECRET)


def unknown(value: Any) -> bool:
    """True for a value the engine will know only once a resource exists."""
    return value == UNKNOWN


def unchecked(urn: str, what: str) -> Finding:
    """The finding of a rule that cannot judge `what` yet (it is not known during preview)."""
    return Finding(
        urn, f"cannot check during preview: {what} is not known until it exists", unchecked=True
    )


def as_int(value: Any) -> int | None:
    """An integer, from an int, a whole float (protobuf Structs carry every number as a double)
    or its text; None otherwise."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return None


def as_float(value: Any) -> float | None:
    try:
        return float(str(value))
    except (TypeError, ValueError):
        return None


def _group_instance_type(resources: Sequence[ResourceView], role: str) -> str | None:
    for _, group in gpu_groups(resources):
        if group_role(group) == role and known(group.get("instanceType")):
            return group["instanceType"]
    return None


def decode_instance_type(iec: ResourceView, resources: Sequence[ResourceView]) -> str | None:
    """The decoder's instance type: from the HyperPod decode group, else the endpoint's."""
    types = instance_types(iec)
    return _group_instance_type(resources, "decode") or (types[0] if types else None)


def role_instance_type(iec: ResourceView, resources: Sequence[ResourceView], role: str):
    """The instance type `role` runs on: its HyperPod group's, else the decoder's. A colocated
    endpoint's workers run on its own groups (colocated_instance_types), not on a decode group
    another endpoint's DPD pool has: of those, the type with the least memory per GPU, the one
    that binds."""
    if pd_spec(iec) is None:
        types = colocated_instance_types(iec, resources)
        sized = [t for t in types if gpu_spec(t) is not None]
        if sized:
            return min(sized, key=lambda t: (gpu_spec(t).gpu_memory_bytes, t))
        if types:
            return types[0]
    return _group_instance_type(resources, role) or decode_instance_type(iec, resources)


def colocated_instance_types(iec: ResourceView, resources: Sequence[ResourceView]) -> list[str]:
    """The types a colocated endpoint's workers land on: those of the HyperPod groups its node
    affinity requires (role colocated, and the groups it is pinned to: specs/placement.py), else
    the instanceType(s) it lists."""
    terms = (
        (spec(iec).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
        or {}
    ).get("nodeSelectorTerms") or []
    if not terms:
        return instance_types(iec)

    def matches(labels: Mapping[str, Any], term: Mapping[str, Any]) -> bool:
        return all(
            e.get("operator") == "In" and labels.get(e.get("key")) in (e.get("values") or [])
            for e in term.get("matchExpressions") or []
        )

    found = set()
    for _, group in hyperpod_groups(resources):
        labels = (group.get("kubernetesConfig") or {}).get("labels") or {}
        if known(group.get("instanceType")) and any(matches(labels, t) for t in terms):
            found.add(group["instanceType"])
    return sorted(found)


# How the pack reads each number of RoleNumbers from the deployed args: its parser, and vLLM's
# value where the flag is absent (None: no default the rules can use).
_READ_BACK = {
    "tensor_parallel_size": (as_int, 1),
    "gpu_memory_utilization": (as_float, VLLM_UTILIZATION),
    "max_model_len": (as_int, None),
    "max_num_seqs": (as_int, VLLM_MAX_NUM_SEQS),
}


def role_numbers(iec: ResourceView, role: str) -> RoleNumbers:
    """What vLLM runs with on `role`: the typed numbers where the view has them (the gate:
    settings/endpoint/numbers.py), else read back from the deployed args (vLLM's defaults where absent)."""
    if iec.facts is not None:
        return iec.facts.roles[role]
    args = effective_args(iec, role)
    read = {}
    for number, flag in NUMBER_FLAGS.items():
        parse, default = _READ_BACK[number]
        text = flag_value(args, flag)
        read[number] = parse(text) if text else default
    return RoleNumbers(**read)


def pd_buffer_bytes(iec: ResourceView) -> int | None:
    """PD_BUFFER_SIZE: the typed fact where the view has it, else the deployed env's value."""
    if iec.facts is not None:
        return iec.facts.pd_buffer_bytes
    return as_int(env(iec).get("PD_BUFFER_SIZE"))


# --- where a fix points: the stack's keys -------------------------------------------------

# The endpoint's own key of each number, for a fix where the view has no settings (the pack).
_SETTINGS = {
    "tensor_parallel_size": "tensorParallelSize",
    "gpu_memory_utilization": "gpuMemoryUtilization",
    "max_model_len": "maxModelLen",
    "pd_buffer_bytes": "pdBufferSize",
}


def endpoint_key(iec: ResourceView, *rest: str) -> str:
    """The config key of the endpoint an IEC comes from, from its resource name (the one
    `endpoint`'s IEC is endpoint-iec, the endpoints map's endpoint-<key>-iec): what a fix names,
    in the gate and the pack alike."""
    path = endpoint_config_path(iec.name.removesuffix("-iec"))
    return f"{PROJECT}:" + ".".join((*path, *rest))


def setting(iec: ResourceView, number: str, role: str | None = None) -> str:
    """Where the user sets `number` (a RoleNumbers field, or pd_buffer_bytes) of `role`: the
    settings' answer where the view has it (a role's args may override the setting), else the
    endpoint's own key."""
    keys = iec.facts.keys if iec.facts is not None else {}
    found = keys.get(number if role is None else f"{role}.{number}")
    if found:
        return found
    if number == "tensor_parallel_size" and role is not None and pd_spec(iec) is not None:
        return endpoint_key(iec, role, _SETTINGS[number])  # the role's own (role_tp)
    return endpoint_key(iec, _SETTINGS[number])


def pd_buffer_to(iec: ResourceView, size_bytes: int) -> str:
    """'<key> to <size>' for a PD buffer of `size_bytes` (whole GiB): pdBufferSize, or the
    environmentVariables.PD_BUFFER_SIZE that overrides it, which takes a size alike."""
    return f"{setting(iec, 'pd_buffer_bytes')} to {size_bytes // GIB}GiB"


def worker_facts(iec: ResourceView) -> WorkerFacts:
    """The endpoint's numbers as the rules see them (typed, or read back from props)."""
    return WorkerFacts(pd_buffer_bytes(iec), {r: role_numbers(iec, r) for r in DPD_ROLES})


def role_sizing(iec: ResourceView, resources: Sequence[ResourceView], role: str):
    """(model, instance, tp, utilization, max_model_len, buffer) of `role`, or None when any
    but the buffer is unknown (an unknown buffer is 0 here; `sizing_inputs` needs it)."""
    try:
        model = load_model(annotation(iec, "sizing-model") or "")
    except SizingError:
        return None
    # Any GPU type with EC2 numbers (core/sizing/gpu_types.py), as the settings size it.
    instance = gpu_spec(role_instance_type(iec, resources, role))
    numbers = role_numbers(iec, role)
    tp, utilization = numbers.tensor_parallel_size, numbers.gpu_memory_utilization
    max_len, buffer = numbers.max_model_len, pd_buffer_bytes(iec) or 0
    if None in (instance, tp, utilization, max_len) or not tp:
        return None
    return model, instance, tp, utilization, max_len, buffer


def sizing_inputs(iec: ResourceView, resources: Sequence[ResourceView]):
    """The decoder's `role_sizing`, or None when any input, the PD buffer included, is unknown
    (then the sizing rules have nothing to judge)."""
    if pd_buffer_bytes(iec) is None:
        return None
    return role_sizing(iec, resources, "decode")


def sized_dpd_endpoints(resources: Sequence[ResourceView]):
    """(endpoint, sizing inputs) of every DPD endpoint whose sizing inputs are all known."""
    for iec in endpoints(resources):
        if pd_spec(iec) is None:
            continue
        inputs = sizing_inputs(iec, resources)
        if inputs is not None:
            yield iec, inputs
