"""The recording rules of the endpoints with an SLO (settings/endpoint/slo.py): per pool, what the alerts
(specs/slo/alerts.py) and dashboards read.

Every recorded series carries `endpoint` (the key of hyperpod-dpd:endpoints, or the single
endpoint's name) and `role` (prefill, decode, colocated): alerts inherit them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from settings.endpoint.entries import EndpointEntry
from settings.endpoint.slo import SloConfig, effective_slo
from settings.stack import StackSettings
from specs.slo.series import (
    ERROR_REASON,
    EXTERNAL_HITS,
    EXTERNAL_QUERIES,
    GENERATION_TOKENS,
    ITL_BUCKETS,
    KV_CACHE_USAGE,
    PREEMPTIONS,
    PROMPT_LENGTH_BUCKETS,
    PROMPT_TOKENS,
    PROMPT_TOKENS_BY_SOURCE,
    RECEIVED_SOURCE,
    REQUESTS,
    TTFT_BUCKETS,
    WAITING,
    bucket_at_least,
    le_matcher,
    pool_selector,
    serving_pool,
)

RULE_PREFIX = "hyperpod_dpd"
EVALUATION_INTERVAL = "1m"
SHORT = "5m"  # the window of every per-pool rate and quantile
# The windows of the error-ratio burn-rate alerts (Google SRE workbook, "Alerting on SLOs",
# multiwindow, multi-burn-rate alerts: sre.google/workbook/alerting-on-slos/).
ERROR_WINDOWS = ("5m", "30m", "1h", "2h", "6h", "1d")


def record(name: str) -> str:
    return f"{RULE_PREFIX}:{name}"


@dataclass(frozen=True)
class Judged:
    """An endpoint the rules watch: its entry and its objective."""

    entry: EndpointEntry
    slo: SloConfig
    stack: str  # the commands an alert's action prints name it

    @property
    def label(self) -> str:
        return self.entry.label

    @property
    def serving(self) -> str:
        return serving_pool(self.entry.config.mode)

    def matchers(self, pool: str) -> str:
        """The selector of one recorded series of this endpoint's `pool`."""
        return f'{{endpoint="{self.label}",role="{pool}"}}'


def judged(s: StackSettings, stack: str) -> list[Judged]:
    """The endpoints with an objective (their own slo or the stack's), by key."""
    out = []
    for entry in s.entries():
        slo = effective_slo(s.slo, entry.config.slo)
        if slo is not None:
            out.append(Judged(entry, slo, stack))
    return out


def _rate(series: str, selector: str, window: str = SHORT) -> str:
    return f"sum(rate({series}{selector}[{window}]))"


def _count_rate(series: str, selector: str) -> str:
    """A counter's rate that reads 0, not nothing, when the pool has no pod: a prefill pool with
    none computes no prompt, which the not-disaggregating alert must see."""
    return f"{_rate(series, selector)} or vector(0)"


def _quantile(q: float, buckets: str, selector: str) -> str:
    return f"histogram_quantile({q}, sum by (le) (rate({buckets}{selector}[{SHORT}])))"


def pool_records(j: Judged, pool: str) -> list[dict[str, Any]]:
    """The recording rules of one pool of `j`."""
    e = j.entry.config
    sel = pool_selector(e.name, e.namespace, pool)
    errors = pool_selector(e.name, e.namespace, pool, f'finished_reason="{ERROR_REASON}"')
    received = pool_selector(e.name, e.namespace, pool, f'source="{RECEIVED_SOURCE}"')
    exprs = {
        "requests:rate5m": _count_rate(REQUESTS, sel),
        "request_errors:rate5m": _count_rate(REQUESTS, errors),
        "ttft_seconds:p50_5m": _quantile(0.5, TTFT_BUCKETS, sel),
        "ttft_seconds:p99_5m": _quantile(0.99, TTFT_BUCKETS, sel),
        "itl_seconds:p99_5m": _quantile(0.99, ITL_BUCKETS, sel),
        "requests_waiting:sum": f"sum({WAITING}{sel})",
        "kv_cache_usage:avg": f"avg({KV_CACHE_USAGE}{sel})",
        "preemptions:rate5m": _count_rate(PREEMPTIONS, sel),
        "generation_tokens:rate5m": _count_rate(GENERATION_TOKENS, sel),
        "prompt_tokens:rate5m": _count_rate(PROMPT_TOKENS, sel),
        # The share of the pool's prompt tokens that arrived as KV (a DPD decoder: ~1).
        "prompt_tokens_received:ratio_rate5m": (
            f"{_rate(PROMPT_TOKENS_BY_SOURCE, received)} / {_rate(PROMPT_TOKENS_BY_SOURCE, sel)}"
        ),
        "external_kv_hits:ratio_rate5m": (
            f"{_rate(EXTERNAL_HITS, sel)} / {_rate(EXTERNAL_QUERIES, sel)}"
        ),
    }
    if e.mode == "dpd" and pool == "decode":
        # Requests whose prompt is longer than the routing threshold: the router sends them to
        # the prefill pool first, so the decoder should receive their KV.
        numbers = j.entry.numbers.of_role("decode")
        bound = bucket_at_least(e.routing_threshold, numbers.max_model_len.value)
        bucket = pool_selector(e.name, e.namespace, pool, le_matcher(bound))
        count = PROMPT_LENGTH_BUCKETS.removesuffix("_bucket") + "_count"
        exprs["long_prompts:rate5m"] = (
            f"{_rate(count, sel)} - {_rate(PROMPT_LENGTH_BUCKETS, bucket)}"
        )
    labels = {"endpoint": j.label, "role": pool}
    return [
        {"record": record(name), "expr": expr, "labels": labels} for name, expr in exprs.items()
    ]


def error_ratio_records(j: Judged) -> list[dict[str, Any]]:
    """The serving pool's error ratio over each burn-rate window."""
    e = j.entry.config
    sel = pool_selector(e.name, e.namespace, j.serving)
    errors = pool_selector(e.name, e.namespace, j.serving, f'finished_reason="{ERROR_REASON}"')
    labels = {"endpoint": j.label, "role": j.serving}
    return [
        {
            "record": record(f"request_error:ratio_rate{w}"),
            "expr": f"{_rate(REQUESTS, errors, w)} / {_rate(REQUESTS, sel, w)}",
            "labels": dict(labels),
        }
        for w in ERROR_WINDOWS
    ]
