"""The built-in autoscaling signals (`autoscaling.*.metric`): each a gauge the pinned vLLM always
exports (core/vllm/vllm_metrics.json, generated from its source: a vLLM bump that renames or drops
one fails at import here), how it is aggregated over a pool's pods, and its range.

"Average" (the CRD's metricType): KEDA divides the query's value by the replicas, so the target
is per replica (queued or running requests); "Value": the value itself (the KV cache usage,
already an average over the pods). The range is the metric's own: a target beyond it is never
reached, and the pool never scales out.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.vllm.vllm_metrics import VllmMetric, exported_gauge


@dataclass(frozen=True)
class Signal:
    metric: VllmMetric
    aggregate: str  # PromQL aggregation over the pool's series
    metric_type: str  # the CRD's prometheusTrigger.metricType
    unit: str
    top: float | None = None  # a target must stay below it (None: unbounded)


SIGNALS: dict[str, Signal] = {
    "waiting-requests": Signal(
        exported_gauge("vllm:num_requests_waiting"), "sum", "Average", "requests per replica"
    ),
    "running-requests": Signal(
        exported_gauge("vllm:num_requests_running"), "sum", "Average", "requests per replica"
    ),
    # vLLM's help text: "KV-cache usage. 1 means 100 percent usage." (tests/core tie the two).
    "kv-cache-usage": Signal(
        exported_gauge("vllm:kv_cache_usage_perc"),
        "avg",
        "Value",
        "a fraction of the KV cache, 0 to 1 (1 = full)",
        top=1.0,
    ),
}


def signal_query(signal: Signal, namespace: str, pod_pattern: str) -> str:
    """The PromQL of `signal` over the pods of `namespace` whose name matches `pod_pattern`."""
    selector = f'namespace="{namespace}",pod=~"{pod_pattern}"'
    return f"{signal.aggregate}({signal.metric.name}{{{selector}}})"
