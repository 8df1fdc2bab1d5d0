"""The vLLM series the SLO rules and `hyperpod-dpd canary` read, and how one endpoint's pool is
selected: names from core/vllm/vllm_metrics.json (generated from the pinned vLLM's source: a bump that
renames or drops one fails here, at import), pods from core/vllm/pod_names.py (no sibling endpoint's
pods match), the labels `namespace` and `pod` of the observability add-on's scrape.

Errors: vLLM counts every finished request in `vllm:request_success` by `finished_reason`, one of
vllm/v1/engine/__init__.py's FINISH_REASON_STRINGS ("stop", "length", "abort", "error", v0.19.0).
"error" is a request the engine failed; it is counted whatever HTTP status the router answered
(a failed request answered with HTTP 200: smg-project/smg#2382). "abort" is a client going away
and is no error of the endpoint's.

The serving pool of an endpoint is the pool whose histograms a user sees: decode for DPD (every
request ends there: its ITL and errors are the endpoint's), the one pool of a colocated endpoint.
A DPD decoder's TTFT starts when the router hands it the request, after the prefiller's turn:
the prefill pool's own TTFT is recorded beside it.
"""

from __future__ import annotations

from core.vllm.pod_names import pod_name_pattern, worker_deployment
from core.vllm.vllm_metrics import VllmMetric, vllm_metrics

ERROR_REASON = "error"


def _series(name: str, kind: str) -> str:
    """The exposed series of metric `name`, of type `kind`: a counter's `_total`, a histogram's
    `_bucket`."""
    metric: VllmMetric | None = vllm_metrics().get(name)
    if metric is None or metric.type != kind or metric.when:
        raise KeyError(f"{name}: not a {kind} the pinned vLLM always exports ({metric})")
    suffix = {"counter": "_total", "histogram": "_bucket", "gauge": ""}[kind]
    (sample,) = [s for s in metric.samples if s == name + suffix]
    return sample


def bucket_series(name: str) -> str:
    """The `_bucket` series of vLLM's histogram `name`."""
    return _series(name, "histogram")


REQUESTS = _series("vllm:request_success", "counter")
TTFT_BUCKETS = bucket_series("vllm:time_to_first_token_seconds")
ITL_BUCKETS = bucket_series("vllm:inter_token_latency_seconds")
PROMPT_LENGTH_BUCKETS = _series("vllm:request_prompt_tokens", "histogram")
WAITING = _series("vllm:num_requests_waiting", "gauge")
KV_CACHE_USAGE = _series("vllm:kv_cache_usage_perc", "gauge")  # "1 means 100 percent usage"
PREEMPTIONS = _series("vllm:num_preemptions", "counter")
GENERATION_TOKENS = _series("vllm:generation_tokens", "counter")
PROMPT_TOKENS = _series("vllm:prompt_tokens", "counter")
# vllm/v1/metrics/stats.py PromptTokenStats (v0.19.0): each prompt token's source, one of
# local_compute, local_cache_hit, external_kv_transfer (KV a connector brought in: on a DPD
# decoder, the prefiller's).
PROMPT_TOKENS_BY_SOURCE = _series("vllm:prompt_tokens_by_source", "counter")
RECEIVED_SOURCE = "external_kv_transfer"
# Tokens the KV connector was asked for, and found ("External prefix cache hits from KV connector
# cross-instance cache sharing"): on a DPD decoder, the KV the prefiller sent.
EXTERNAL_QUERIES = _series("vllm:external_prefix_cache_queries", "counter")
EXTERNAL_HITS = _series("vllm:external_prefix_cache_hits", "counter")
# The engine's own prefix cache, in tokens: of the prompt tokens looked up, those found cached.
PREFIX_CACHE_QUERIES = _series("vllm:prefix_cache_queries", "counter")
PREFIX_CACHE_HITS = _series("vllm:prefix_cache_hits", "counter")


def serving_pool(mode: str) -> str:
    return "decode" if mode == "dpd" else "colocated"


def pool_selector(name: str, namespace: str, pool: str, extra: str = "") -> str:
    """The label matchers of one pool's pods (`extra`: more matchers, e.g. a finished_reason)."""
    pods = pod_name_pattern(worker_deployment(name, pool))
    more = f",{extra}" if extra else ""
    return f'{{namespace="{namespace}",pod=~"{pods}"{more}}}'


def bucket_at_least(threshold: int, max_model_len: int) -> int:
    """The least bucket bound of vLLM's prompt-length histogram at or above `threshold` tokens:
    vLLM builds its buckets with build_1_2_5_buckets(max_model_len) (vllm/v1/metrics/loggers.py,
    v0.19.0): 1, 2, 5, 10, 20, 50, ... while at most max_model_len. Prompts above it are longer
    than `threshold` whatever falls between the two. A threshold beyond the last bound: the last
    bound (prompts above it are the longest the histogram tells apart)."""
    bounds = [m * 10**e for e in range(12) for m in (1, 2, 5) if m * 10**e <= max_model_len]
    return next((b for b in bounds if b >= threshold), bounds[-1])


def le_matcher(bound: int) -> str:
    """A bucket's `le`, as the Python client writes it (5000.0) or as a normalizing server does."""
    return f'le=~"{bound}(\\\\.0)?"'
