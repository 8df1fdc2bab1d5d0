"""hyperpod-dpd-gpu-memory: each worker fits its GPUs, so it can start at all.

vLLM's share of a GPU (--gpu-memory-utilization) must hold the weights, the activation reserve
and the KV cache of one --max-model-len sequence (vLLM refuses to start otherwise: "the model's
max seq len is larger than the maximum number of tokens that can be stored in KV cache"); beside
it, the decoder's PD buffer and the overhead must fit. The fix offered is one that works: a
utilization range, or, when none exists, what else to change.
"""

from __future__ import annotations

from core.catalog import GIB, INSTANCES
from core.gpu_memory import worker_fit
from policies.rules import views
from policies.rules.base import Finding, Rule


def advice(fit, role, model, instance, tp, buffer) -> str:
    """How to make `fit` work, as the stack's keys say it (shared with pd-buffer-fits)."""
    if fit.possible:
        return (
            "set hyperpod-dpd:endpoint.gpuMemoryUtilization between "
            f"{fit.lowest:.2f} and {fit.highest:.2f}"
        )
    options = []
    if tp < instance.gpu_count:
        options.append("raise hyperpod-dpd:endpoint.tensorParallelSize (more GPUs per replica)")
    if role == "decode" and buffer:
        room = fit.gpu_memory_bytes - fit.need_bytes - (fit.outside_bytes - buffer)
        if room > 0:
            options.append(f"shrink hyperpod-dpd:endpoint.pdBufferSize to at most {room // GIB}GiB")
    options.append("lower hyperpod-dpd:endpoint.maxModelLen")
    larger = [i.name for i in INSTANCES.values() if i.gpu_memory_bytes > instance.gpu_memory_bytes]
    if larger:
        options.append(f"use a larger-GPU instance type ({', '.join(larger)})")
    return (
        f"no --gpu-memory-utilization works ({fit.need_bytes / GIB:.1f} GiB needed inside vLLM's "
        f"share, {fit.outside_bytes / GIB:.1f} GiB beside it, of {fit.gpu_memory_bytes / GIB:.1f}"
        f" GiB): " + ", or ".join(options)
    )


def check(resources, limits):
    for iec in views.endpoints(resources):
        dpd = views.pd_spec(iec) is not None
        for role in views.DPD_ROLES if dpd else ("decode",):
            inputs = views.role_sizing(iec, resources, role)
            if inputs is None:
                continue
            model, instance, tp, utilization, max_len, buffer = inputs
            buffer = buffer if dpd else 0  # colocated workers allocate no PD buffer
            overhead = int(limits.overhead_gib * GIB)
            fit = worker_fit(role, model, instance, tp, max_len, buffer, overhead)
            if fit.holds(utilization):
                continue  # pd-buffer-fits judges what is beside the share
            share = fit.share(utilization)
            name = f"{role} workers" if dpd else "workers"
            yield Finding(
                iec.urn,
                f"{name} cannot start: {model.name} at TP {tp} needs {fit.need_bytes / GIB:.1f} "
                f"GiB per GPU for weights, activations and the KV cache of one {max_len}-token "
                f"sequence, but --gpu-memory-utilization {utilization:g} gives vLLM "
                f"{share / GIB:.1f} GiB of each {instance.gpu_model}'s "
                f"{fit.gpu_memory_bytes / GIB:.1f} GiB; "
                + advice(fit, role, model, instance, tp, buffer),
            )


RULE = Rule(
    "hyperpod-dpd-gpu-memory",
    "Weights, activations and one max-model-len of KV cache fit vLLM's share of each GPU",
    "mandatory",
    check,
)
