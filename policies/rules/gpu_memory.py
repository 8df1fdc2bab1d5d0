"""hyperpod-dpd-gpu-memory: each worker fits its GPUs, so it can start at all.

vLLM's share of a GPU (--gpu-memory-utilization) must hold the weights, the activation reserve
and the KV cache of one --max-model-len sequence (vLLM refuses to start otherwise: "the model's
max seq len is larger than the maximum number of tokens that can be stored in KV cache"); beside
it, the decoder's PD buffer and the overhead must fit. The fix offered is one that works: a
utilization range, or, when none exists, what else to change.
"""

from __future__ import annotations

import dataclasses

from core.catalog import GIB, INSTANCES
from core.gpu_memory import weights_bytes_per_rank, worker_fit
from policies.rules import views
from policies.rules.base import Finding, Rule


def sharing(iec, resources, role, limits) -> list:
    """The Fits of the endpoint's other roles that read their utilization from the same key as
    `role` (the endpoint's gpuMemoryUtilization, unless a role's args set their own): a value
    offered for that key must hold them too."""
    key = views.setting(iec, "gpu_memory_utilization", role)
    dpd = views.pd_spec(iec) is not None
    fits = []
    for other in views.DPD_ROLES if dpd else ():
        inputs = views.role_sizing(iec, resources, other)
        if other == role or inputs is None:
            continue
        if views.setting(iec, "gpu_memory_utilization", other) != key:
            continue
        model, instance, tp, _, max_len, buffer = inputs
        overhead = int(limits.overhead_gib * GIB)
        fits.append(worker_fit(other, model, instance, tp, max_len, buffer, overhead))
    return fits


def advice(iec, resources, limits, role, fit, inputs) -> str:
    """How to make `fit` (of `role`, sized from `inputs`: views.role_sizing's tuple) work, as the
    stack's keys say it (shared with pd-buffer-fits): the keys of `iec`'s endpoint, or the
    role's args where they set the number. Every option named is one that works: each is
    checked with the same sizing before it is offered, a utilization also against the roles
    that read the same key (`sharing`)."""
    model, instance, tp, _, max_len, buffer = inputs
    overhead = int(limits.overhead_gib * GIB)
    others = sharing(iec, resources, role, limits)
    if fit.possible:
        key = views.setting(iec, "gpu_memory_utilization", role)
        low = max([fit.lowest, *(o.lowest for o in others)])
        high = min([fit.highest, *(o.highest for o in others)])
        if low <= high:
            return f"set {key} between {low:.2f} and {high:.2f}"
        # No one value holds every role that reads the key: this role gets its own.
        args = views.endpoint_key(iec, role, "args")
        return (
            f"set --gpu-memory-utilization in {args} between {fit.lowest:.2f} and "
            f"{fit.highest:.2f} (no one {key} holds every role)"
        )
    options = []
    gpus = instance.gpu_count
    if tp < gpus and worker_fit(role, model, instance, gpus, max_len, buffer, overhead).possible:
        options.append(f"raise {views.setting(iec, 'tensor_parallel_size', role)} to {gpus}")
    if role == "decode" and buffer:
        room = fit.gpu_memory_bytes - fit.need_bytes - (fit.outside_bytes - buffer)
        if room >= GIB:
            options.append(f"shrink {views.pd_buffer_to(iec, room // GIB * GIB)}")
    # The KV cache of one short sequence: when even that does not fit, no context length will.
    if worker_fit(role, model, instance, tp, 1, buffer, overhead).possible:
        longest = _longest_context(role, model, instance, tp, buffer, overhead, max_len)
        options.append(f"lower {views.setting(iec, 'max_model_len', role)} to {longest}")
    weights = weights_bytes_per_rank(model, tp) / GIB
    if not options:
        options.append(_what_would(role, model, instance, buffer, overhead, max_len))
        return (
            f"the weights alone do not fit: {model.name} at TP {tp} is {weights:.1f} GiB per GPU "
            f"of {instance.gpu_model}'s {fit.gpu_memory_bytes / GIB:.1f} GiB, with "
            f"{fit.outside_bytes / GIB:.1f} GiB beside vLLM's share; no context length or "
            "utilization helps: " + options[0]
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


def _what_would(role, model, instance, buffer, overhead, max_len) -> str:
    """The instance types (at TP = their GPUs) and the 8-bit checkpoint that would hold it."""
    fits = [
        f"{i.name} ({i.gpu_model}, {i.gpu_memory_bytes / GIB:.0f} GiB)"
        for i in INSTANCES.values()
        if i.gpu_memory_bytes > instance.gpu_memory_bytes
        and worker_fit(role, model, i, i.gpu_count, max_len, buffer, overhead).possible
    ]
    ways = []
    if fits:
        ways.append(
            "set hyperpod-dpd:instanceGroups.<group>.instanceType to one with more memory per "
            f"GPU: {', '.join(fits)}"
        )
    if model.bytes_per_element > 1:
        fp8 = dataclasses.replace(model, bytes_per_element=1)
        at = instance.gpu_count
        if worker_fit(role, fp8, instance, at, max_len, buffer, overhead).possible:
            ways.append(f"stage an FP8 checkpoint of {model.name} (half the weights) at TP {at}")
    return ", or ".join(ways) or "serve a smaller model: none of the catalog's GPUs holds it"


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
                + advice(iec, resources, limits, role, fit, (*inputs[:5], buffer)),
            )


RULE = Rule(
    "hyperpod-dpd-gpu-memory",
    "Weights, activations and one max-model-len of KV cache fit vLLM's share of each GPU",
    "mandatory",
    check,
)
