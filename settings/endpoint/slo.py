"""Service level objectives per endpoint: what the alert rules burn against and what
`hyperpod-dpd canary` judges a candidate by. `hyperpod-dpd:slo` is the stack-wide default;
an endpoint's own `slo` replaces it whole (every key it leaves out takes the model's default,
not the stack's: one place says an endpoint's objective)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator, Field

from core.problems import ConfigProblem
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


def effective_slo(stack_slo: SloConfig | None, endpoint_slo: SloConfig | None) -> SloConfig | None:
    """The endpoint's objective: its own `slo`, else the stack's; None when neither is set."""
    return endpoint_slo if endpoint_slo is not None else stack_slo


def check_slo(slo: SloConfig | None, path: tuple[str, ...]) -> list[ConfigProblem]:
    """A median no later than its 99th percentile."""
    if slo is None or slo.ttft_p50_ms <= slo.ttft_p99_ms:
        return []
    key = full_key((*path, "ttftP50Ms"))
    return [
        ConfigProblem(
            key,
            slo.ttft_p50_ms,
            f"a median at most the 99th percentile ({full_key((*path, 'ttftP99Ms'))} is "
            f"{slo.ttft_p99_ms})",
            set_fix(key, slo.ttft_p99_ms),
        )
    ]


def _empty_is_unset(value: object) -> object:
    """`{}` (the default Pulumi.yaml declares: Pulumi requires a default for an optional key) is
    no objective; any key set adopts them, the rest at the defaults above."""
    return None if value == {} else value


OptionalSlo = Annotated[SloConfig | None, BeforeValidator(_empty_is_unset)]
