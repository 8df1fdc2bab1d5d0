"""Synthetic vLLM traffic, minute by minute, for one pod: the series the pinned vLLM exports
(names from core/vllm/vllm_metrics.json through specs/slo/series.py), written two ways:
  - promtool's `input_series` notation (`promtool test rules`: the alert rules' tests);
  - OpenMetrics text over a time range (`promtool tsdb create-blocks-from openmetrics`), which a
    real Prometheus then serves (`hyperpod-dpd demo`'s canary, and the canary's tests).

Every request of a minute falls in one TTFT bucket and its tokens in one ITL bucket: the
quantiles are known (histogram_quantile interpolates within the bucket).
Pods are named as Kubernetes names a Deployment's pods (core/vllm/pod_names.py pod_name).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from core.vllm.pod_names import pod_name, worker_deployment
from core.vllm.vllm_metrics import vllm_metrics
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
)

MODEL = "llama-3.3-70b"  # the model_name label of every series: no query leans on it
# Subsets of vLLM 0.19.0's own bucket bounds (vllm/v1/metrics/loggers.py).
TTFT_LE = (0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0)
ITL_LE = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2)
PROMPT_LE = (1000, 2000, 5000, 10000)


@dataclass(frozen=True)
class Minute:
    """What one pod does each minute."""

    requests: int = 600
    errors: int = 0
    ttft_le: float = 0.25  # every request's TTFT falls in the bucket ending here
    itl_le: float = 0.025
    tokens_out: int = 60000  # generation tokens (one ITL observation each)
    prompt_tokens: int = 600000
    received: int = 0  # of the prompt tokens, arrived as KV (external_kv_transfer)
    kv_queries: int = 0  # tokens the KV connector looked up, and found
    kv_hits: int = 0
    long_prompts: int = 0  # requests with a prompt above the top routing bucket (> 5000 tokens)
    waiting: float = 0  # requests waiting at minute 0, and their growth per minute
    waiting_growth: float = 0
    kv_usage: float = 0.5
    preemptions: int = 0


def decode_minute(**changes) -> Minute:
    """A healthy DPD decoder: nearly every prompt token arrives as KV, found by the connector."""
    return replace(
        Minute(received=590000, kv_queries=600000, kv_hits=590000, long_prompts=300), **changes
    )


def prefill_minute(**changes) -> Minute:
    """A healthy prefiller: it computes the prompts and answers one token each."""
    return replace(Minute(tokens_out=600), **changes)


@dataclass(frozen=True)
class SyntheticPod:
    name: str
    namespace: str
    minute: Minute

    def series(self) -> list[tuple[str, dict[str, str], float, float]]:
        """(series name, labels, value at minute 0, growth per minute) of every series."""
        m = self.minute
        base = {"namespace": self.namespace, "pod": self.name, "model_name": MODEL, "engine": "0"}
        ok = m.requests - m.errors
        out = [
            (REQUESTS, {**base, "finished_reason": "stop"}, 0, ok),
            (REQUESTS, {**base, "finished_reason": ERROR_REASON}, 0, m.errors),
            (WAITING, base, m.waiting, m.waiting_growth),
            (KV_CACHE_USAGE, base, m.kv_usage, 0),
            (PREEMPTIONS, base, 0, m.preemptions),
            (GENERATION_TOKENS, base, 0, m.tokens_out),
            (PROMPT_TOKENS, base, 0, m.prompt_tokens),
            (PROMPT_TOKENS_BY_SOURCE, {**base, "source": RECEIVED_SOURCE}, 0, m.received),
            (
                PROMPT_TOKENS_BY_SOURCE,
                {**base, "source": "local_compute"},
                0,
                m.prompt_tokens - m.received,
            ),
            (EXTERNAL_QUERIES, base, 0, m.kv_queries),
            (EXTERNAL_HITS, base, 0, m.kv_hits),
        ]
        out += _histogram(TTFT_BUCKETS, base, TTFT_LE, m.requests, lambda le: le >= m.ttft_le)
        out += _histogram(ITL_BUCKETS, base, ITL_LE, m.tokens_out, lambda le: le >= m.itl_le)
        short = m.requests - m.long_prompts
        out += [
            (
                PROMPT_LENGTH_BUCKETS,
                {**base, "le": f"{float(le)}"},
                0,
                short if le <= 5000 else m.requests,
            )
            for le in PROMPT_LE
        ]
        out.append((PROMPT_LENGTH_BUCKETS, {**base, "le": "+Inf"}, 0, m.requests))
        count = PROMPT_LENGTH_BUCKETS.removesuffix("_bucket") + "_count"
        out.append((count, base, 0, m.requests))
        return out


def _histogram(bucket, base, bounds, per_minute, holds) -> list:
    rows = [
        (bucket, {**base, "le": f"{float(le)}"}, 0, per_minute if holds(le) else 0) for le in bounds
    ]
    rows.append((bucket, {**base, "le": "+Inf"}, 0, per_minute))
    count = bucket.removesuffix("_bucket") + "_count"
    return [*rows, (count, base, 0, per_minute)]


def pod(endpoint: str, pool: str, minute: Minute, namespace: str = "inference", seed: int = 1):
    name = pod_name(worker_deployment(endpoint, pool), random.Random(f"{endpoint}/{pool}/{seed}"))
    return SyntheticPod(name, namespace, minute)


def canary_pods(scenarios: dict[str, tuple[Minute, Minute, Minute]]) -> list[SyntheticPod]:
    """The canary stack's pods for each scenario, in a namespace named after it: the baseline's
    colocated pod and the candidate's prefill and decode pods, doing (baseline, prefill,
    decode)'s minutes."""
    pods = []
    for scenario, (base, prefill, decode) in scenarios.items():
        pods += [
            pod("baseline", "colocated", base, namespace=scenario),
            pod("candidate", "prefill", prefill, namespace=scenario),
            pod("candidate", "decode", decode, namespace=scenario),
        ]
    return pods


def serve_canary(directory, scenarios: dict[str, tuple[Minute, Minute, Minute]], minutes: int):
    """A real Prometheus serving `canary_pods(scenarios)`' series over the last `minutes`."""
    import time

    from hyperpod_dpd.demo.prometheus import serve_backfill

    start = int(time.time()) - minutes * 60
    return serve_backfill(directory, openmetrics(canary_pods(scenarios), start, minutes))


def _selector(name: str, labels: dict[str, str]) -> str:
    inner = ",".join(f'{k}="{v}"' for k, v in labels.items())
    return f"{name}{{{inner}}}"


def input_series(pods: list[SyntheticPod], minutes: int) -> list[dict[str, str]]:
    """promtool's input_series: every series of `pods`, one sample a minute for `minutes`."""
    return [
        {"series": _selector(name, labels), "values": f"{start:g}+{growth:g}x{minutes}"}
        for p in pods
        for name, labels, start, growth in p.series()
    ]


def openmetrics(pods: list[SyntheticPod], start: int, minutes: int, step: int = 60) -> str:
    """OpenMetrics text of `pods` from unix time `start`, one sample each `step` seconds."""
    by_family: dict[str, list[str]] = {}
    for p in pods:
        for name, labels, first, growth in p.series():
            family = _family_of(name)
            for i in range(minutes * 60 // step + 1):
                value = first + growth * i * step / 60
                by_family.setdefault(family, []).append(
                    f"{_selector(name, labels)} {value:g} {start + i * step}"
                )
    lines = []
    for family, samples in by_family.items():
        kind = vllm_metrics()[family].type
        lines.append(f"# TYPE {family} {kind}")
        lines += samples
    return "\n".join([*lines, "# EOF"]) + "\n"


def _family_of(series: str) -> str:
    """The metric family an exposed series belongs to."""
    return _FAMILIES[series].name


_FAMILIES = {sample: m for m in vllm_metrics().values() for sample in m.samples}
