"""What an endpoint's SLO alerts are built from: the burn rates of the error-budget alerts and the
quantile each latency objective is read at. The rules (specs/slo/records.py, specs/slo/alerts.py)
are written from these, and the settings judge each objective against them
(settings/endpoint/slo.py): the number checked is the number alerted on.

- Burn rates: multiwindow, multi-burn-rate alerts, as the Google SRE workbook's "Alerting on
  SLOs" chapter recommends (sre.google/workbook/alerting-on-slos/, table 5-8): page at 14.4x the
  budget over 1h (and 5m) or 6x over 6h (and 30m), a ticket at 3x over 1d (and 2h). An alert
  fires when the error ratio exceeds rate x budget: a ratio is at most 1, so a budget of 1/rate
  or more leaves that alert unable to fire.
- Latency: each objective is compared with `histogram_quantile(q, ...)` over vLLM's histogram of
  the same measure (core/vllm/vllm_metrics.json: its bucket bounds, from the pinned vLLM's source).
"""

from __future__ import annotations

from dataclasses import dataclass

PAGE, TICKET = "page", "ticket"
# (burn rate, long window, short window, severity): the SRE workbook's table 5-8.
BURN_RATES = ((14.4, "1h", "5m", PAGE), (6, "6h", "30m", PAGE), (3, "1d", "2h", TICKET))


@dataclass(frozen=True)
class LatencyObjective:
    key: str  # the objective's key under slo (camelCase, as a stack file writes it)
    histogram: str  # the vLLM histogram it is read from
    quantile: float  # histogram_quantile's q
    record: str  # the recorded series the alert compares with the objective
    alert: str
    what: str


LATENCY_OBJECTIVES = (
    LatencyObjective(
        "ttftP50Ms", "vllm:time_to_first_token_seconds", 0.5, "ttft_seconds:p50_5m",
        "HyperpodDpdTtftP50AboveSlo", "TTFT p50",
    ),
    LatencyObjective(
        "ttftP99Ms", "vllm:time_to_first_token_seconds", 0.99, "ttft_seconds:p99_5m",
        "HyperpodDpdTtftP99AboveSlo", "TTFT p99",
    ),
    LatencyObjective(
        "itlP99Ms", "vllm:inter_token_latency_seconds", 0.99, "itl_seconds:p99_5m",
        "HyperpodDpdItlP99AboveSlo", "ITL p99",
    ),
)  # fmt: skip
