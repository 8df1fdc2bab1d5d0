"""The built-in autoscaling signals (`autoscaling.*.metric`): each a series the pinned vLLM always
exports (core/vllm/vllm_metrics.json, generated from its source: a vLLM bump that renames or drops
one fails at import here), how it is aggregated over a pool's pods, and its range.

"Average" (the CRD's metricType): KEDA divides the query's value by the replicas, so the target
is per replica (queued or running requests, prompt tokens per second); "Value": the value itself
(the KV cache usage, already an average over the pods). The range is the metric's own: a target
beyond it is never reached, and the pool never scales out.

A counter is read as its rate over RATE_WINDOW: four of the collector's scrapes
(core/vocabulary.py SCRAPE_INTERVAL_SECONDS), so a rate has samples to take even when one scrape
is late (Prometheus' rate() needs two samples in its window).

The pair of a DPD endpoint (`autoscaling.ratio`): one pool follows the other at the layout's
ratio. Its trigger counts the pods of the pool it follows that report a vLLM series (the stack's
own collector scrapes every worker: a pod that serves reports one), times the ratio, or 0 when
none reports, so the query never reads empty; KEDA's AverageValue target of 1 then asks for
ceil(count x ratio) replicas of the follower (Kubernetes' HPA, GetExternalPerPodMetricReplicas).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.vllm.vllm_metrics import VllmMetric, counter_series, exported
from core.vocabulary import SCRAPE_INTERVAL_SECONDS

RATE_WINDOW = f"{4 * SCRAPE_INTERVAL_SECONDS}s"


@dataclass(frozen=True)
class Signal:
    metric: VllmMetric
    aggregate: str  # PromQL aggregation over the pool's series
    metric_type: str  # the CRD's prometheusTrigger.metricType
    unit: str
    top: float | None = None  # a target must stay below it (None: unbounded)

    def series(self, selector: str) -> str:
        """What the query reads of the series `selector` picks: a gauge as it is, a counter as
        its rate (per second)."""
        if self.metric.type == "counter":
            return f"rate({counter_series(self.metric)}{selector}[{RATE_WINDOW}])"
        return f"{self.metric.name}{selector}"


SIGNALS: dict[str, Signal] = {
    "waiting-requests": Signal(
        exported("vllm:num_requests_waiting", "gauge"), "sum", "Average", "requests per replica"
    ),
    "running-requests": Signal(
        exported("vllm:num_requests_running", "gauge"), "sum", "Average", "requests per replica"
    ),
    # vLLM's help text: "KV-cache usage. 1 means 100 percent usage." (tests/core tie the two).
    "kv-cache-usage": Signal(
        exported("vllm:kv_cache_usage_perc", "gauge"),
        "avg",
        "Value",
        "a fraction of the KV cache, 0 to 1 (1 = full)",
        top=1.0,
    ),
    # "Number of prefill tokens processed": the prompt tokens a prefiller works through per
    # second, the load its TTFT answers to (hyperpod-dpd advise derives a target from the SLO).
    "prompt-tokens-per-second": Signal(
        exported("vllm:prompt_tokens", "counter"),
        "sum",
        "Average",
        "prompt tokens per second per replica",
    ),
}
# What a pool's pods report whenever they serve: the series the pair's trigger counts them by.
REPORTED = exported("vllm:num_requests_running", "gauge")


def _selector(namespace: str, pod_pattern: str) -> str:
    return f'{{namespace="{namespace}",pod=~"{pod_pattern}"}}'


def signal_query(signal: Signal, namespace: str, pod_pattern: str) -> str:
    """The PromQL of `signal` over the pods of `namespace` whose name matches `pod_pattern`."""
    return f"{signal.aggregate}({signal.series(_selector(namespace, pod_pattern))})"


def pair_query(namespace: str, leader_pattern: str, follower: int, leader: int) -> str:
    """The PromQL of a follower pool's floor at `follower` of its replicas per `leader` of the
    pool it follows: the pods matching `leader_pattern` that report (0 when none does) times
    follower / leader, for an AverageValue target of 1. Whole numbers, multiplied before they
    are divided, so that k x 5 / 3 is exact where a rounded 1.666667 would ask for one more."""
    pods = f"count(count by (pod) ({REPORTED.name}{_selector(namespace, leader_pattern)}))"
    return f"({pods} or vector(0)) * {follower} / {leader}"
