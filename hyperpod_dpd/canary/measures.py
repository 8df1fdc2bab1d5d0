"""What the canary reads of one side over the window: the serving pool's requests, errors,
TTFT and ITL quantiles and output tokens (the series and pod selection of specs/slo/series.py,
the ones the alert rules read), and the side's GPUs and hourly price from the plan's numbers.
A side of several endpoints (the baselines of a split) is their union."""

from __future__ import annotations

from dataclasses import dataclass

from hyperpod_dpd.canary.prometheus import Prometheus
from hyperpod_dpd.canary.verdict import Measures
from specs.slo.series import (
    ERROR_REASON,
    GENERATION_TOKENS,
    ITL_BUCKETS,
    REQUESTS,
    TTFT_BUCKETS,
    pool_selector,
    serving_pool,
)


@dataclass(frozen=True)
class Pool:
    name: str
    namespace: str
    mode: str
    gpus: int
    hourly_cost_usd: float | None


def _union(series: str, pools: list[Pool], window: str, fn: str, extra: str = "") -> str:
    parts = [
        f"{fn}({series}{pool_selector(p.name, p.namespace, serving_pool(p.mode), extra)}[{window}])"
        for p in pools
    ]
    return " or ".join(parts)


def measure(prom: Prometheus, pools: list[Pool], window: str) -> Measures:
    def total(series: str, extra: str = "") -> float:
        return prom.scalar(f"sum({_union(series, pools, window, 'increase', extra)})") or 0.0

    def quantile_ms(q: float, buckets: str) -> float | None:
        rates = _union(buckets, pools, window, "rate")
        value = prom.scalar(f"histogram_quantile({q}, sum by (le) ({rates}))")
        return None if value is None else value * 1000

    seconds = _seconds(window)
    costs = [p.hourly_cost_usd for p in pools]
    return Measures(
        requests=round(total(REQUESTS)),
        errors=round(total(REQUESTS, f'finished_reason="{ERROR_REASON}"')),
        ttft_p50_ms=quantile_ms(0.5, TTFT_BUCKETS),
        ttft_p99_ms=quantile_ms(0.99, TTFT_BUCKETS),
        itl_p50_ms=quantile_ms(0.5, ITL_BUCKETS),
        itl_p99_ms=quantile_ms(0.99, ITL_BUCKETS),
        output_tokens_per_s=total(GENERATION_TOKENS) / seconds,
        gpus=sum(p.gpus for p in pools),
        hourly_cost_usd=None if None in costs else sum(costs),  # type: ignore[arg-type]
    )


UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def _seconds(window: str) -> int:
    return int(window[:-1]) * UNITS[window[-1]]
