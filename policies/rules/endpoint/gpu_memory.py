"""hyperpod-dpd-gpu-memory: each worker fits its GPUs, so it can start at all.

vLLM's share of a GPU (--gpu-memory-utilization) must hold the weights, the activation reserve
and the KV cache of one --max-model-len sequence (vLLM refuses to start otherwise: "the model's
max seq len is larger than the maximum number of tokens that can be stored in KV cache"); beside
it, the decoder's PD buffer and the overhead must fit. The fix offered is one that works: a
utilization range, or, when none exists, what else to change.
"""

from __future__ import annotations

from core.sizing.catalog import GIB
from core.sizing.gpu_memory import worker_fit
from core.worker_advice import Names, cannot_start, unfit_advice
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
    names = Names(
        views.setting(iec, "tensor_parallel_size", role),
        views.setting(iec, "max_model_len", role),
        "hyperpod-dpd:instanceGroups.<group>.instanceType",
        lambda size: views.pd_buffer_to(iec, size),
        views.setting(iec, "gpu_memory_utilization", role),
    )
    # The roles a raised TP key also raises: each must start at what the fix offers.
    tp_key = views.setting(iec, "tensor_parallel_size", role)
    governed = [
        other
        for other in (views.DPD_ROLES if views.pd_spec(iec) is not None else (role,))
        if views.setting(iec, "tensor_parallel_size", other) == tp_key
    ]
    # Never a context shorter than the prompts the endpoint is sized for.
    shortest = views.as_int(views.annotation(iec, "expected-prompt-tokens")) or 1
    utilization = inputs[3]
    return unfit_advice(role, fit, model, instance, tp, max_len, buffer, overhead, names,
                        utilization, governed, shortest)  # fmt: skip


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
            name = f"{role} workers" if dpd else "workers"
            yield Finding(
                iec.urn,
                cannot_start(name, model, instance, tp, max_len, utilization, fit)
                + advice(iec, resources, limits, role, fit, (*inputs[:5], buffer)),
            )


RULE = Rule(
    "hyperpod-dpd-gpu-memory",
    "Weights, activations and one max-model-len of KV cache fit vLLM's share of each GPU",
    "mandatory",
    check,
)
