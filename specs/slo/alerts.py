"""The alerts of an endpoint with an SLO, on its recorded series (specs/slo/records.py). Each
carries the endpoint, the role, a severity (page: act now; ticket: act today) and an `action`
annotation saying what to do; a canary candidate's say how to roll it back.

- Error budget burn: multiwindow, multi-burn-rate, as the Google SRE workbook's "Alerting on
  SLOs" chapter recommends (sre.google/workbook/alerting-on-slos/, table 5-8): page at 14.4x over
  1h (and 5m) or 6x over 6h (and 30m), a ticket at 3x over 1d (and 2h).
- Latency above the SLO: TTFT p50 and p99, ITL p99, for 10 minutes.
- DPD not disaggregating: a decoder that computes the prompts it should receive as KV, and a
  prefill pool that computes nothing while long prompts arrive (modelplaneai/modelplane#175).
- KV transfer failing: the prefill pool computes, yet the decoder's KV connector finds little
  of it (vllm-project/vllm#50754: decode waiting on KV writes that failed). vLLM 0.19.0's own
  series carry no transfer time; LMCache's connector exports none under vLLM's names.
- A decoder's KV cache saturated, or preempting; a prefill queue growing.
- A candidate of `hyperpod-dpd:traffic` worse than its baseline beyond slo.baselineMargin.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from specs.slo.records import Judged, record
from specs.traffic_steps import baseline_of, rollback_command

PAGE, TICKET = "page", "ticket"
FOR = "10m"
# Google SRE workbook, table 5-8: (burn rate, long window, short window, severity).
BURN_RATES = ((14.4, "1h", "5m", PAGE), (6, "6h", "30m", PAGE), (3, "1d", "2h", TICKET))
RECEIVED_AT_LEAST = 0.1  # a DPD decoder's prompt tokens that arrive as KV, at the least
FOUND_AT_LEAST = 0.5  # of the KV its connector looks up
KV_CACHE_FULL = 0.95
ALERTS_DOC = "docs/alerts.md"
# The alert a split's weights make or unmake (a candidate compared with its baseline): with the
# rollback lines, what a weight step may change in the rule file (hyperpod_dpd/rollout/routing.py).
COMPARISON_ALERT = "HyperpodDpdCandidateWorseThanBaseline"


def _alert(
    name: str, expr: str, j: Judged, role: str, severity: str, summary: str, action: str,
    wait: str = FOR,
) -> dict[str, Any]:  # fmt: skip
    return {
        "alert": name,
        "expr": expr,
        "for": wait,
        "labels": {"severity": severity, "endpoint": j.label, "role": role},
        "annotations": {"summary": summary, "action": action},
    }


def _ratio(j: Judged, window: str) -> str:
    return f"{record(f'request_error:ratio_rate{window}')}{j.matchers(j.serving)}"


def _way_back(j: Judged, traffic: Mapping[str, int], otherwise: str) -> str:
    """The rollback of a canary candidate, else `otherwise`."""
    if traffic and j.label in traffic and baseline_of(traffic) != j.label:
        back = rollback_command(traffic, j.label, j.stack)
        return f"Roll the candidate back: {back}; then {otherwise}"
    return otherwise


def burn_alerts(j: Judged, traffic: Mapping[str, int]) -> list[dict[str, Any]]:
    budget = j.slo.error_rate
    out = []
    for severity in (PAGE, TICKET):
        terms = [
            f"({_ratio(j, long)} > {rate * budget:g} and {_ratio(j, short)} > {rate * budget:g})"
            for rate, long, short, level in BURN_RATES
            if level == severity
        ]
        name = "HyperpodDpdErrorBudgetBurn" + ("Fast" if severity == PAGE else "Slow")
        out.append(_alert(
            name, " or ".join(terms), j, j.serving, severity,
            f"{j.label} fails {{{{ $value | humanizePercentage }}}} of requests: its "
            f"{budget:g} error budget burns too fast",
            _way_back(j, traffic, "read the failing pods' logs (kubectl logs) for the engine's "
                      f"error; {ALERTS_DOC}"),
            "2m" if severity == PAGE else "15m",
        ))  # fmt: skip
    return out


def latency_alerts(j: Judged, traffic: Mapping[str, int]) -> list[dict[str, Any]]:
    s, sel = j.slo, j.matchers(j.serving)
    checks = (
        ("HyperpodDpdTtftP50AboveSlo", "ttft_seconds:p50_5m", s.ttft_p50_ms, "TTFT p50"),
        ("HyperpodDpdTtftP99AboveSlo", "ttft_seconds:p99_5m", s.ttft_p99_ms, "TTFT p99"),
        ("HyperpodDpdItlP99AboveSlo", "itl_seconds:p99_5m", s.itl_p99_ms, "ITL p99"),
    )
    return [
        _alert(
            name,
            f"{record(series)}{sel} > {ms / 1000:g}",
            j,
            j.serving,
            TICKET,
            f"{j.label}'s {what} is {{{{ $value | humanizeDuration }}}}, over its SLO of {ms} ms",
            _way_back(
                j,
                traffic,
                "scale the pool out or lower the load (hyperpod-dpd advise "
                f"sizes it); {ALERTS_DOC}",
            ),
        )
        for name, series, ms, what in checks
    ]


def dpd_alerts(j: Judged, traffic: Mapping[str, int]) -> list[dict[str, Any]]:
    """The ways a DPD endpoint fails to disaggregate or to move its KV."""
    decode, prefill = j.matchers("decode"), j.matchers("prefill")
    long_prompts = f"{record('long_prompts:rate5m')}{decode} > 0"
    prefill_computes = f"{record('prompt_tokens:rate5m')}{prefill}"
    fix = (f"check the KV path: hyperpod-dpd verify, the pods' LMCache/NIXL logs, EFA "
           f"({ALERTS_DOC})")  # fmt: skip
    return [
        _alert(
            "HyperpodDpdDecodeComputesPrompts",
            f"{record('prompt_tokens_received:ratio_rate5m')}{decode} < {RECEIVED_AT_LEAST:g} "
            f"and {long_prompts}",
            j, "decode", PAGE,
            f"{j.label}'s decoders receive {{{{ $value | humanizePercentage }}}} of their "
            "prompt tokens as KV and compute the rest: DPD is not disaggregating",
            _way_back(j, traffic, fix),
        ),
        _alert(
            "HyperpodDpdPrefillIdle",
            f"{prefill_computes} == 0 and on(endpoint) {long_prompts}",
            j, "prefill", PAGE,
            f"{j.label}'s prefill pool computes no prompt while prompts longer than the routing "
            "threshold reach its decoders",
            _way_back(j, traffic, "check the prefill pods are Ready and the router sends to them "
                      f"(routingThreshold); {fix}"),
        ),
        _alert(
            "HyperpodDpdKvTransferFailing",
            f"{record('external_kv_hits:ratio_rate5m')}{decode} < {FOUND_AT_LEAST:g} "
            f"and on(endpoint) {prefill_computes} > 0 and {long_prompts}",
            j, "decode", PAGE,
            f"{j.label}'s decoders find {{{{ $value | humanizePercentage }}}} of the KV they "
            "look up while the prefill pool computes: KV transfers fail",
            _way_back(j, traffic, fix),
        ),
    ]  # fmt: skip


def capacity_alerts(j: Judged, traffic: Mapping[str, int]) -> list[dict[str, Any]]:
    """A serving pool out of KV cache or preempting; a prefilling pool's queue growing."""
    served, sel = j.serving, j.matchers(j.serving)
    queue_pool = "prefill" if j.entry.config.mode == "dpd" else served
    queue = f"{record('requests_waiting:sum')}{j.matchers(queue_pool)}"
    scale = "scale the pool out (autoscaling, replicas) or lower max-num-seqs"
    return [
        _alert(
            "HyperpodDpdKvCacheSaturated",
            f"{record('kv_cache_usage:avg')}{sel} > {KV_CACHE_FULL:g}",
            j, served, TICKET,
            f"{j.label}'s {served} KV cache is {{{{ $value | humanizePercentage }}}} full",
            _way_back(j, traffic, f"{scale}; {ALERTS_DOC}"),
        ),
        _alert(
            "HyperpodDpdPreempting",
            f"{record('preemptions:rate5m')}{sel} > 0",
            j, served, TICKET,
            f"{j.label}'s {served} pool preempts {{{{ $value }}}} requests/s (KV cache short)",
            _way_back(j, traffic, f"{scale}; {ALERTS_DOC}"),
        ),
        _alert(
            "HyperpodDpdPrefillQueueGrowing",
            f"{queue} > 0 and deriv({queue}[10m]) > 0",
            j, queue_pool, TICKET,
            f"{j.label}'s {queue_pool} queue grows ({{{{ $value }}}} waiting)",
            _way_back(j, traffic, f"scale the {queue_pool} pool out; {ALERTS_DOC}"),
        ),
    ]  # fmt: skip


def comparison_alerts(
    j: Judged, listed: list[Judged], traffic: Mapping[str, int]
) -> list[dict[str, Any]]:
    """A candidate worse than its split's baseline beyond its margin (both judged)."""
    if not traffic or j.label not in traffic or baseline_of(traffic) == j.label:
        return []
    base = next((b for b in listed if b.label == baseline_of(traffic)), None)
    if base is None:
        return []
    worse = 1 + j.slo.baseline_margin
    mine, theirs = j.matchers(j.serving), base.matchers(base.serving)
    terms = [
        f"{record(series)}{mine} > on() ({worse:g} * {record(series)}{theirs})"
        for series in ("ttft_seconds:p99_5m", "itl_seconds:p99_5m")
    ]
    err = record("request_error:ratio_rate30m")
    terms.append(
        f"({err}{mine} > on() ({worse:g} * {err}{theirs}) and {err}{mine} > {j.slo.error_rate:g})"
    )
    return [
        _alert(
            COMPARISON_ALERT, " or ".join(terms), j, j.serving, PAGE,
            f"{j.label} is more than {j.slo.baseline_margin:.0%} worse than {base.label} "
            "(TTFT p99, ITL p99 or errors)",
            _way_back(j, traffic, f"hyperpod-dpd canary --stack {j.stack} --endpoint {j.label} says by how much"),
            "15m",
        )
    ]  # fmt: skip


def alerts(j: Judged, listed: list[Judged], traffic: Mapping[str, int]) -> list[dict[str, Any]]:
    out = burn_alerts(j, traffic) + latency_alerts(j, traffic) + capacity_alerts(j, traffic)
    if j.entry.config.mode == "dpd":
        out += dpd_alerts(j, traffic)
    return out + comparison_alerts(j, listed, traffic)
