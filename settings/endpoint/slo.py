"""Service level objectives per endpoint: what the alert rules burn against and what
`hyperpod-dpd canary` judges a candidate by. `hyperpod-dpd:slo` is the stack-wide default;
an endpoint's own `slo` replaces it whole (every key it leaves out takes the model's default,
not the stack's: one place says an endpoint's objective)."""

from __future__ import annotations

import math
from typing import Annotated

from pydantic import BeforeValidator, Field

from core.problems import ConfigProblem
from core.vllm.slo_alerting import BURN_RATES, LATENCY_OBJECTIVES, LatencyObjective
from core.vllm.vllm_metrics import vllm_metrics, vllm_metrics_version
from settings.config.errors import full_key, set_fix
from settings.config.fields import Decimal, SettingsModel


class SloConfig(SettingsModel):
    ttft_p50_ms: int = Field(
        500, ge=1, description="Time to first token, median, at most this many milliseconds."
    )
    ttft_p99_ms: int = Field(
        2000, ge=1, description="Time to first token, 99th percentile, at most this many ms."
    )
    itl_p99_ms: int = Field(
        100, ge=1, description="Inter-token latency, 99th percentile, at most this many ms."
    )
    error_rate: Decimal = Field(
        0.01,
        gt=0,
        lt=1,
        description="The error budget: the fraction of requests that may fail (0.01 = 99% "
        "succeed). Burn-rate alerts and the canary's error test use it.",
    )
    min_requests: int = Field(
        1000,
        ge=1,
        description="The fewest requests each side of a canary comparison needs over its "
        "window; fewer: `hyperpod-dpd canary` answers hold.",
    )
    baseline_margin: Decimal = Field(
        0.1,
        ge=0,
        le=10,
        description="How much worse than the baseline a candidate's latency may be (0.1 = 10%) "
        "before the canary rolls it back and the candidate-worse alert fires.",
    )

    def objective_ms(self, key: str) -> int:
        """A latency objective by its key (`itlP99Ms`)."""
        (name,) = [n for n, f in type(self).model_fields.items() if f.alias == key]
        return getattr(self, name)


def effective_slo(stack_slo: SloConfig | None, endpoint_slo: SloConfig | None) -> SloConfig | None:
    """The endpoint's objective: its own `slo`, else the stack's; None when neither is set."""
    return endpoint_slo if endpoint_slo is not None else stack_slo


def check_slo(slo: SloConfig | None, path: tuple[str, ...]) -> list[ConfigProblem]:
    """A median no later than its 99th percentile, and every objective one its alerts can tell
    from a breach: an error budget every burn-rate alert can reach, latencies histogram_quantile
    can answer on either side of."""
    if slo is None:
        return []
    problems = _check_budget(slo, path)
    for objective in LATENCY_OBJECTIVES:
        problems += _check_latency(slo, path, objective)
    if slo.ttft_p50_ms <= slo.ttft_p99_ms:
        return problems
    key = full_key((*path, "ttftP50Ms"))
    return [
        *problems,
        ConfigProblem(
            key,
            slo.ttft_p50_ms,
            f"a median at most the 99th percentile ({full_key((*path, 'ttftP99Ms'))} is "
            f"{slo.ttft_p99_ms})",
            set_fix(key, slo.ttft_p99_ms),
        ),
    ]


def _check_budget(slo: SloConfig, path: tuple[str, ...]) -> list[ConfigProblem]:
    """Each burn-rate alert fires when the error ratio exceeds rate x budget (core/vllm/slo_alerting.py):
    an error ratio is at most 1, so a budget of 1/rate or more silences that alert for good."""
    budget, fastest = slo.error_rate, max(rate for rate, *_ in BURN_RATES)
    unreachable = [(rate, long) for rate, long, *_ in BURN_RATES if rate * budget >= 1]
    if not unreachable:
        return []
    key = full_key((*path, "errorRate"))
    limit = 1 / fastest
    rates = ", ".join(f"{rate:g}x over {long} ({rate * budget:.3g})" for rate, long in unreachable)
    *most, last = [f"{rate:g}" for rate, *_ in BURN_RATES]
    times = f"{', '.join(most)} or {last}"
    allowed = (
        f"an error budget below 1/{fastest:g} = {limit:.4f} (the fraction of requests that may "
        f"fail): the burn-rate alerts fire when the error ratio exceeds {times} times the "
        f"budget, and no error ratio exceeds 1; at {budget:g} these can never fire: {rates}"
    )
    availability = round(1 - budget, 10)
    if 0 < availability < limit:
        fix = (
            f"written as an availability? errorRate is the share that may fail: "
            f"{set_fix(key, availability)}"
        )
    else:
        fix = set_fix(key, math.floor(limit * 100 - 1e-9) / 100)
    return [ConfigProblem(key, budget, allowed, fix)]


def _check_latency(
    slo: SloConfig, path: tuple[str, ...], o: LatencyObjective
) -> list[ConfigProblem]:
    """The alert compares histogram_quantile(q) over vLLM's buckets with the objective. It
    interpolates within a bucket from 0 below the first bound (Prometheus, promql/quantile.go
    bucketQuantile), so it answers no less than q x the first bound; past the last finite bound
    it answers that bound. An objective below the first fires whenever the endpoint serves; one
    at or above the last never fires."""
    bounds = vllm_metrics()[o.histogram].buckets
    if not bounds:
        return []  # computed at run time: nothing to judge by here
    ms = slo.objective_ms(o.key)
    floor_ms, top_ms = o.quantile * bounds[0] * 1000, bounds[-1] * 1000
    if floor_ms <= ms < top_ms:
        return []
    key = full_key((*path, o.key))
    least, most = math.ceil(floor_ms), math.floor(top_ms) - 1
    buckets = (
        f"vLLM {vllm_metrics_version()} counts {o.what.split()[0]} in {o.histogram}'s buckets "
        f"from {bounds[0]:g} s to {bounds[-1]:g} s (vllm/v1/metrics/loggers.py)"
    )
    if ms < floor_ms:
        why = (
            f"histogram_quantile({o.quantile:g}) answers no less than {o.quantile:g} x "
            f"{bounds[0]:g} s = {floor_ms:g} ms, so {o.alert} would fire whenever the endpoint "
            "serves"
        )
        fixed = least
    else:
        why = (
            f"histogram_quantile answers at most the last bound, {top_ms:.0f} ms, so {o.alert} "
            "could never fire"
        )
        fixed = most
    allowed = f"{least} to {most} ms: {buckets}; {why}"
    return [ConfigProblem(key, ms, allowed, set_fix(key, fixed))]


def _empty_is_unset(value: object) -> object:
    """`{}` (the default Pulumi.yaml declares: Pulumi requires a default for an optional key) is
    no objective; any key set adopts them, the rest at the defaults above."""
    return None if value == {} else value


OptionalSlo = Annotated[SloConfig | None, BeforeValidator(_empty_is_unset)]
