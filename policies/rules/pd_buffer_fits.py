"""hyperpod-dpd-pd-buffer-fits: PD_BUFFER_SIZE plus overhead fits the decoder's GPU memory
left by --gpu-memory-utilization (the buffer lives outside vLLM's share)."""

from __future__ import annotations

from core.catalog import GIB
from core.sizing import OVERHEAD_BYTES, role_budget
from policies.rules import views
from policies.rules.base import Finding, Rule


def check(resources, limits):
    for iec, inputs in views.sized_dpd_endpoints(resources):
        model, instance, tp, utilization, _, buffer = inputs
        budget = role_budget("decode", model, instance, tp, utilization, buffer)
        headroom = budget.headroom_bytes + OVERHEAD_BYTES - int(limits.overhead_gib * GIB)
        if headroom < 0:
            gpu = instance.gpu_memory_bytes / GIB
            left = gpu * (1 - utilization)
            fit_util = max(0.0, (gpu - buffer / GIB - limits.overhead_gib) / gpu)
            yield Finding(
                iec.urn,
                f"PD_BUFFER_SIZE {buffer / GIB:g} GiB + {limits.overhead_gib:g} GiB overhead "
                f"does not fit the {left:.1f} GiB each {instance.gpu_model} leaves at "
                f"--gpu-memory-utilization {utilization:g} on the decoder; lower "
                "hyperpod-dpd:endpoint.pdBufferSize or set hyperpod-dpd:endpoint."
                f"gpuMemoryUtilization to at most {int(fit_util * 100) / 100:.2f}",
            )


RULE = Rule(
    "hyperpod-dpd-pd-buffer-fits",
    "PD buffer + overhead fits the decoder GPU memory vLLM leaves free",
    "mandatory",
    check,
)
