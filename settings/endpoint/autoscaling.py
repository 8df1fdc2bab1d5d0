"""An endpoint's autoscaling: one pool's KEDA scaler (metric or query, target, bounds), a DPD
layout's prefill:decode ratio, and the capacity `hyperpod-dpd advise` recorded."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from core.kubernetes.autoscaling import MAX_STABILIZATION_WINDOW_SECONDS
from core.units import INT32_MAX
from settings.config.fields import (
    Decimal,
    SettingsModel,
    Suggested,
)

ScalingMetric = Literal[
    "waiting-requests", "running-requests", "kv-cache-usage", "prompt-tokens-per-second"
]


class RecordedCapacity(SettingsModel):
    """What `hyperpod-dpd advise` recorded one replica of a pool holds within the SLO (written by
    `advise --write` beside the target it derived): the plan judges a target against it without
    simulating anything."""

    metric: ScalingMetric = Field(
        description="The signal the capacity is measured in.", examples=["running-requests"]
    )
    per_replica: Decimal = Field(
        gt=0,
        description="The load one replica holds within the SLO, in the metric's unit: a target "
        "above it is an advisory in the plan.",
        examples=[24],
    )
    within: str = Field(
        min_length=1,
        description="The SLO, workload and source it was derived from (e.g. 'TPOT p50 <= 15 ms "
        "at ISL 4096 / OSL 256, aisimulate 0.13.0'), for the advisory's message.",
        examples=["TPOT p50 <= 15 ms at ISL 4096 / OSL 256"],
    )


class PoolRatio(SettingsModel):
    """A DPD layout's prefill:decode ratio, kept while both pools scale: the larger pool never
    falls below its share of the other's replicas."""

    prefill: int = Field(ge=1, description="Prefill replicas of the layout's unit.", examples=[1])
    decode: int = Field(ge=1, description="Decode replicas of the layout's unit.", examples=[1])

    @property
    def follower(self) -> str:
        """The pool held at its share of the other's: decode, unless prefill has more."""
        return "prefill" if self.prefill > self.decode else "decode"

    @property
    def leader(self) -> str:
        return "decode" if self.follower == "prefill" else "prefill"

    def share(self, pool: str) -> int:
        return self.prefill if pool == "prefill" else self.decode


def _stabilization(seconds: int) -> int:
    if seconds > MAX_STABILIZATION_WINDOW_SECONDS:
        raise Suggested(
            f"at most {MAX_STABILIZATION_WINDOW_SECONDS} seconds: the operator hands it to the "
            "HPA that KEDA creates as its scale-down stabilization window, and the API server "
            "refuses a longer one (Kubernetes pkg/apis/autoscaling/validation, "
            "MaxStabilizationWindowSeconds), so the pool would stop scaling",
            MAX_STABILIZATION_WINDOW_SECONDS,
        )
    return seconds


class ScalingConfig(SettingsModel):
    """One pool's autoscaling (KEDA, through the operator's autoScalingSpec): between
    minReplicas and maxReplicas on one Prometheus signal of the stack's workspace."""

    min_replicas: int = Field(
        1,
        ge=0,
        description="Replicas at the least (minReplicaCount). 0 only with a query of your own, or "
        "for an endpoint with weight 0 in traffic: a metric is read from the pool's own pods, so "
        "with none the pool never scales up again.",
    )
    max_replicas: int = Field(ge=1, description="Replicas at the most (maxReplicaCount).")
    metric: ScalingMetric | None = Field(
        None,
        description="A vLLM signal by name: waiting-requests (queued prompts: prefill), "
        "prompt-tokens-per-second (prefill: vLLM's prompt tokens processed, as a rate), "
        "running-requests or kv-cache-usage (decode; vLLM's KV cache usage, a fraction from 0 "
        "to 1), over the pool's own pods. Or give query.",
    )
    query: str | None = Field(
        None,
        min_length=1,
        description="A PromQL query of your own, instead of metric: it must parse and return "
        "one series (an aggregation without by/without, e.g. sum(...)), as KEDA reads it.",
    )
    target: Decimal = Field(
        gt=0,
        description="The value per replica the scaler holds the signal at (kv-cache-usage: "
        "the fraction to hold, below 1, e.g. 0.8).",
        examples=[16],
    )
    # An int32 field of the IEC (the API server refuses more than INT32_MAX).
    cooldown_seconds: int = Field(
        300,
        ge=0,
        le=INT32_MAX,
        description="Seconds after the last trigger before scaling in (cooldownPeriod).",
    )
    scale_down_stabilization_seconds: Annotated[int, AfterValidator(_stabilization)] = Field(
        300,
        ge=0,
        description="Seconds of lower demand before removing replicas (the HPA's scale-down "
        f"stabilization window): 0 to {MAX_STABILIZATION_WINDOW_SECONDS}.",
    )
    capacity: RecordedCapacity | None = Field(
        None,
        description="What `hyperpod-dpd advise --write` recorded one replica holds within the "
        "SLO (metric, perReplica, within): a target above perReplica is an advisory.",
    )


class AutoscalingConfig(ScalingConfig):
    """A colocated endpoint's autoscaling (the fields of ScalingConfig), or a DPD endpoint's per
    role (prefill, decode: each a ScalingConfig of its own)."""

    max_replicas: int | None = Field(None, ge=1, description="Colocated: maxReplicaCount.")
    target: Decimal | None = Field(
        None, gt=0, description="Colocated: the target per replica.", examples=[16]
    )
    prefill: ScalingConfig | None = Field(None, description="DPD: the prefill pool's.")
    decode: ScalingConfig | None = Field(None, description="DPD: the decode pool's.")
    ratio: PoolRatio | None = Field(
        None,
        description="DPD, both pools autoscaled: the layout's prefill:decode ratio (prefill, "
        "decode). The larger pool (decode on a tie) never falls below its share of the other's "
        "replicas: a second trigger of its own counts the other pool's pods.",
    )
