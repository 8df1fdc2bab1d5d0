"""The verdict on a candidate against its baseline over one window, from their measures: the
recipe of a canary (1-5% of real traffic, compared on latency, errors, tokens/s per GPU and cost
per request; rolled back by routing when worse), judged as Kayenta and Flagger judge ordinary
services, on the endpoint's SLO (settings/endpoint/slo.py).

- hold: either side served fewer requests than slo.minRequests (the answer says how many more);
- rollback: the candidate fails more requests than the baseline (Fisher's exact test, one-sided,
  at ALPHA) or than the SLO's error budget allows (a one-sided binomial test), or its TTFT
  p50/p99 or ITL p99 is above the SLO, or its TTFT/ITL p99 is worse than the baseline's by more
  than slo.baselineMargin;
- promote otherwise, to the next weight step (specs/traffic_steps.py).
Tokens/s per GPU and cost per million output tokens are reported, not judged: a candidate's
share of traffic, not its design, sets them during a canary.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from settings.endpoint.slo import SloConfig
from specs.traffic_steps import promote_command, rollback_command

ALPHA = 0.05  # the tests' significance level: one false alarm in twenty healthy comparisons


@dataclass(frozen=True)
class Measures:
    """One side of the comparison over the window."""

    requests: int
    errors: int
    ttft_p50_ms: float | None  # None: no request in the window
    ttft_p99_ms: float | None
    itl_p50_ms: float | None
    itl_p99_ms: float | None
    output_tokens_per_s: float
    gpus: int
    hourly_cost_usd: float | None  # None: no price known for its instances

    @property
    def error_rate(self) -> float:
        return self.errors / self.requests if self.requests else 0.0

    @property
    def tokens_per_s_per_gpu(self) -> float | None:
        return self.output_tokens_per_s / self.gpus if self.gpus else None

    @property
    def usd_per_million_output_tokens(self) -> float | None:
        if self.hourly_cost_usd is None or self.output_tokens_per_s <= 0:
            return None
        return self.hourly_cost_usd / (self.output_tokens_per_s * 3600) * 1e6

    def report(self) -> dict:
        """The side as `canary --format json` prints it (camelCase, as plan.json)."""
        return {
            "requests": self.requests,
            "errors": self.errors,
            "errorRate": self.error_rate,
            "ttftP50Ms": self.ttft_p50_ms,
            "ttftP99Ms": self.ttft_p99_ms,
            "itlP50Ms": self.itl_p50_ms,
            "itlP99Ms": self.itl_p99_ms,
            "outputTokensPerSecond": self.output_tokens_per_s,
            "outputTokensPerSecondPerGpu": self.tokens_per_s_per_gpu,
            "gpus": self.gpus,
            "hourlyCostUsd": self.hourly_cost_usd,
            "usdPerMillionOutputTokens": self.usd_per_million_output_tokens,
        }


@dataclass(frozen=True)
class Verdict:
    verdict: str  # promote | hold | rollback
    reasons: list[str]
    next: str


def _more_errors_than_baseline(c: Measures, b: Measures) -> float:
    """p-value of Fisher's exact test that the candidate's error rate exceeds the baseline's."""
    from scipy.stats import fisher_exact

    table = [[c.errors, c.requests - c.errors], [b.errors, b.requests - b.errors]]
    return float(fisher_exact(table, alternative="greater").pvalue)


def _more_errors_than_budget(c: Measures, budget: float) -> float:
    """p-value of the one-sided binomial test that the candidate fails more than `budget`."""
    from scipy.stats import binomtest

    return float(binomtest(c.errors, c.requests, budget, alternative="greater").pvalue)


def judge(
    candidate: str,
    c: Measures,
    b: Measures,
    slo: SloConfig,
    traffic: Mapping[str, int],
    stack: str,
) -> Verdict:
    """The verdict; its `next` names `stack` in every command it prints."""
    short = [
        f"{side} served {m.requests} requests in the window, {slo.min_requests - m.requests} "
        f"short of slo.minRequests {slo.min_requests}"
        for side, m in (("candidate", c), ("baseline", b))
        if m.requests < slo.min_requests
    ]
    if short:
        again = (
            f"wait and run hyperpod-dpd canary --stack {stack} --endpoint {candidate} again (or "
            "widen --window)"
        )
        return Verdict("hold", short, again)
    worse = []
    p = _more_errors_than_baseline(c, b)
    if p < ALPHA:
        worse.append(
            f"error rate {c.error_rate:.2%} ({c.errors}/{c.requests}) is higher than the "
            f"baseline's {b.error_rate:.2%} ({b.errors}/{b.requests}): Fisher's exact test "
            f"p={p:.2g} < {ALPHA}"
        )
    p = _more_errors_than_budget(c, slo.error_rate)
    if p < ALPHA:
        worse.append(
            f"error rate {c.error_rate:.2%} is above the SLO's {slo.error_rate:.2%}: binomial "
            f"test p={p:.2g} < {ALPHA}"
        )
    limits = (
        ("TTFT p50", c.ttft_p50_ms, slo.ttft_p50_ms, None),
        ("TTFT p99", c.ttft_p99_ms, slo.ttft_p99_ms, b.ttft_p99_ms),
        ("ITL p99", c.itl_p99_ms, slo.itl_p99_ms, b.itl_p99_ms),
    )
    for what, mine, limit, theirs in limits:
        if mine is None:
            continue
        if mine > limit:
            worse.append(f"{what} {mine:.0f} ms is above the SLO's {limit} ms")
        elif theirs and mine > theirs * (1 + slo.baseline_margin):
            worse.append(
                f"{what} {mine:.0f} ms is {mine / theirs - 1:.0%} above the baseline's "
                f"{theirs:.0f} ms (slo.baselineMargin {slo.baseline_margin:.0%})"
            )
    outside = f"nothing to shift: {candidate} takes no share of hyperpod-dpd:traffic"
    if worse:
        back = rollback_command(traffic, candidate, stack) if candidate in traffic else outside
        return Verdict("rollback", worse, back)
    fine = [
        f"error rate {c.error_rate:.2%} against the baseline's {b.error_rate:.2%} (no "
        f"significant difference at {ALPHA}) and the SLO's {slo.error_rate:.2%}",
        f"TTFT p50/p99 {_ms(c.ttft_p50_ms)}/{_ms(c.ttft_p99_ms)} (SLO {slo.ttft_p50_ms}/"
        f"{slo.ttft_p99_ms} ms; baseline p99 {_ms(b.ttft_p99_ms)}), ITL p99 "
        f"{_ms(c.itl_p99_ms)} (SLO {slo.itl_p99_ms} ms; baseline {_ms(b.itl_p99_ms)})",
    ]
    if candidate not in traffic:
        step = outside
    else:
        step = promote_command(traffic, candidate, stack) or (
            "nothing left to shift: the candidate takes all the traffic"
        )
    return Verdict("promote", fine, step)


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0f} ms"
