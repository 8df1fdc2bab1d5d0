"""hyperpod-dpd-tensor-parallel: TP fits one node, decode TP >= prefill TP (the decoder crashes
otherwise), and each role requests all GPUs of its instance type."""

from __future__ import annotations

from core.sizing.gpu_types import gpu_spec
from policies.rules import views
from policies.rules.base import Finding, Rule


def _tp(iec, role) -> int | None:
    return views.role_numbers(iec, role).tensor_parallel_size


def check(resources, limits):
    for iec in views.endpoints(resources):
        if views.pd_spec(iec) is None:
            continue
        instance = gpu_spec(views.decode_instance_type(iec, resources))
        gpus = instance.gpu_count if instance else None
        tps = {role: _tp(iec, role) for role in views.DPD_ROLES}
        for role, tp in tps.items():
            if tp is not None and gpus is not None and tp > gpus:
                yield Finding(
                    iec.urn,
                    f"{role} --tensor-parallel-size {tp} exceeds the {gpus} GPUs of one "
                    f"{instance.name}; set "
                    f"{views.setting(iec, 'tensor_parallel_size', role)} to {gpus} or less",
                )
            requested = views.as_int(
                (views.role_resources(iec, role).get("requests") or {}).get("nvidia.com/gpu")
            )
            if gpus is not None and requested is not None and requested != gpus:
                yield Finding(
                    iec.urn,
                    f"{role} pods request {requested} GPUs but {instance.name} has {gpus}: one "
                    "DPD worker owns a node; request all of them",
                )
        if None not in tps.values() and tps["decode"] < tps["prefill"]:
            yield Finding(
                iec.urn,
                f"decode TP {tps['decode']} < prefill TP {tps['prefill']}: unsupported, the decoder "
                f"crashes; {_lower_prefill_tp(iec, tps['decode'])}, or raise it on decode",
            )


def _lower_prefill_tp(iec, tp: int) -> str:
    where = views.setting(iec, "tensor_parallel_size", "prefill")
    flag, _, args = where.partition(" in ")
    return f"remove {flag} from {args}" if args else f"set {where} to {tp}"


RULE = Rule(
    "hyperpod-dpd-tensor-parallel",
    "TP <= GPUs per node, decode TP >= prefill TP, GPU requests = the node's GPUs",
    "mandatory",
    check,
)
