"""hyperpod-dpd-pd-buffer-fits: PD_BUFFER_SIZE plus overhead fits the decoder's GPU memory
left by --gpu-memory-utilization (the buffer lives outside vLLM's share). The fix offered is a
utilization that also keeps the worker bootable (gpu_memory.py), or what else to change."""

from __future__ import annotations

from core.sizing.catalog import GIB
from core.sizing.gpu_memory import worker_fit
from policies.rules import views
from policies.rules.base import Finding, Rule
from policies.rules.endpoint.gpu_memory import advice


def check(resources, limits):
    for iec, inputs in views.sized_dpd_endpoints(resources):
        model, instance, tp, utilization, max_len, buffer = inputs
        overhead = int(limits.overhead_gib * GIB)
        fit = worker_fit("decode", model, instance, tp, max_len, buffer, overhead)
        if fit.leaves_room(utilization):
            continue
        left = (fit.gpu_memory_bytes - fit.share(utilization)) / GIB
        yield Finding(
            iec.urn,
            f"PD_BUFFER_SIZE {buffer / GIB:g} GiB + {limits.overhead_gib:g} GiB overhead does "
            f"not fit the {left:.1f} GiB each {instance.gpu_model} leaves at "
            f"--gpu-memory-utilization {utilization:g} on the decoder; "
            + advice(iec, resources, limits, "decode", fit, inputs)
            + (f", or lower {views.setting(iec, 'pd_buffer_bytes')}" if fit.possible else ""),
        )


RULE = Rule(
    "hyperpod-dpd-pd-buffer-fits",
    "PD buffer + overhead fits the decoder GPU memory vLLM leaves free",
    "mandatory",
    check,
)
