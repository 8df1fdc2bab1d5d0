"""What makes a worker that cannot start fit its GPUs, when no --gpu-memory-utilization does:
the options the gpu-memory policy offers a stack and `hyperpod-dpd size` offers its flags, each
checked with the same sizing (core/sizing/gpu_memory.py worker_fit) before it is offered. `Names` says
each option in the caller's words (a stack key, or a flag)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from core.sizing.catalog import GIB, INSTANCES, InstanceSpec, ModelSpec
from core.sizing.gpu_memory import Fit, weights_bytes_per_rank, worker_fit


@dataclass(frozen=True)
class Names:
    tensor_parallel_size: str  # "hyperpod-dpd:endpoint.tensorParallelSize" or "--tp"
    max_model_len: str
    instance_type: str
    pd_buffer_to: Callable[[int], str]  # whole-GiB bytes -> "<key> to 8GiB"


def cannot_start(
    who: str,
    model: ModelSpec,
    instance: InstanceSpec,
    tp: int,
    max_len: int,
    utilization: float,
    fit: Fit,
) -> str:
    """'<who> cannot start: ... needs X GiB ... but --gpu-memory-utilization U gives vLLM Y GiB'
    (the advice follows it)."""
    return (
        f"{who} cannot start: {model.name} at TP {tp} needs {fit.need_bytes / GIB:.1f} "
        f"GiB per GPU for weights, activations and the KV cache of one {max_len}-token "
        f"sequence, but --gpu-memory-utilization {utilization:g} gives vLLM "
        f"{fit.share(utilization) / GIB:.1f} GiB of each {instance.gpu_model}'s "
        f"{fit.gpu_memory_bytes / GIB:.1f} GiB; "
    )


def unfit_advice(
    role: str,
    fit: Fit,
    model: ModelSpec,
    instance: InstanceSpec,
    tp: int,
    max_len: int,
    buffer: int,
    overhead: int,
    names: Names,
) -> str:
    """The options that make `fit` (not possible at any utilization) possible, or, when even
    the weights do not fit, the instance types and the 8-bit checkpoint that would hold them."""
    options = []
    gpus = instance.gpu_count
    if tp < gpus and worker_fit(role, model, instance, gpus, max_len, buffer, overhead).possible:
        options.append(f"raise {names.tensor_parallel_size} to {gpus}")
    if role == "decode" and buffer:
        room = fit.gpu_memory_bytes - fit.need_bytes - (fit.outside_bytes - buffer)
        if room >= GIB:
            options.append(f"shrink {names.pd_buffer_to(room // GIB * GIB)}")
    # The KV cache of one short sequence: when even that does not fit, no context length will.
    if worker_fit(role, model, instance, tp, 1, buffer, overhead).possible:
        longest = _longest_context(role, model, instance, tp, buffer, overhead, max_len)
        options.append(f"lower {names.max_model_len} to {longest}")
    weights = weights_bytes_per_rank(model, tp) / GIB
    if not options:
        return (
            f"the weights alone do not fit: {model.name} at TP {tp} is {weights:.1f} GiB per GPU "
            f"of {instance.gpu_model}'s {fit.gpu_memory_bytes / GIB:.1f} GiB, with "
            f"{fit.outside_bytes / GIB:.1f} GiB beside vLLM's share; no context length or "
            "utilization helps: "
            + _what_would(role, model, instance, buffer, overhead, max_len, names)
        )
    larger = [
        i.name
        for i in INSTANCES.values()
        if i.gpu_memory_bytes > instance.gpu_memory_bytes
        and worker_fit(role, model, i, i.gpu_count, max_len, buffer, overhead).possible
    ]
    if larger:
        options.append(f"use a larger-GPU instance type ({', '.join(larger)})")
    return (
        f"no --gpu-memory-utilization works ({fit.need_bytes / GIB:.1f} GiB needed inside vLLM's "
        f"share, {fit.outside_bytes / GIB:.1f} GiB beside it, of {fit.gpu_memory_bytes / GIB:.1f}"
        f" GiB): " + ", or ".join(options)
    )


def _longest_context(role, model, instance, tp, buffer, overhead, max_len) -> int:
    """The longest --max-model-len below `max_len` some utilization fits, in whole 1024 tokens
    (or the longest at all under 1024)."""
    low, high = 1, max_len
    while low < high:  # the largest length that fits: fitting shrinks as the length grows
        mid = (low + high + 1) // 2
        if worker_fit(role, model, instance, tp, mid, buffer, overhead).possible:
            low = mid
        else:
            high = mid - 1
    return low // 1024 * 1024 or low


def _what_would(role, model, instance, buffer, overhead, max_len, names: Names) -> str:
    """The instance types (at TP = their GPUs) and the 8-bit checkpoint that would hold it."""
    fits = [
        f"{i.name} ({i.gpu_model}, {i.gpu_memory_bytes / GIB:.0f} GiB)"
        for i in INSTANCES.values()
        if i.gpu_memory_bytes > instance.gpu_memory_bytes
        and worker_fit(role, model, i, i.gpu_count, max_len, buffer, overhead).possible
    ]
    ways = []
    if fits:
        ways.append(f"set {names.instance_type} to one with more memory per GPU: {', '.join(fits)}")
    if model.bytes_per_element > 1:
        fp8 = dataclasses.replace(model, bytes_per_element=1)
        at = instance.gpu_count
        if worker_fit(role, fp8, instance, at, max_len, buffer, overhead).possible:
            ways.append(f"stage an FP8 checkpoint of {model.name} (half the weights) at TP {at}")
    return ", or ".join(ways) or "serve a smaller model: none of the catalog's GPUs holds it"
