"""An autoscaled pool's signal, judged at plan time (settings/endpoint/scaling_signal.py, settings/endpoint/promql.py):
a built-in metric's target within the metric's range, a name short enough that the pool's pods
keep the name structure its selector relies on, and a query of the user's that is PromQL giving
KEDA one series. Each refusal names the full key; each printed fix, followed, parses."""

from __future__ import annotations

import pytest

from settings import parse_settings
from tests.conftest import canary_raw, edit
from tests.settings.problems import followed, only_problem

NS = "hyperpod-dpd"
CANDIDATE = f"{NS}:endpoints.candidate"
BASELINE = f"{NS}:endpoints.baseline"


def _decode(**signal) -> dict:
    raw = canary_raw()
    scaling = {"minReplicas": 1, "maxReplicas": 1, "target": 16, **signal}
    edit(raw, f"{CANDIDATE}.autoscaling", {"decode": scaling})
    return raw


def test_a_kv_cache_target_in_percent_is_refused_with_the_metrics_unit():
    raw = _decode(metric="kv-cache-usage", target=80)
    message = only_problem(raw)
    key = f"{CANDIDATE}.autoscaling.decode.target"
    assert message.startswith(f"{key}: got 80.0; allowed: a value below 1: ")
    assert "vllm:kv_cache_usage_perc, a fraction of the KV cache, 0 to 1" in message
    assert "1 means 100 percent usage" in message  # vLLM's own help text, generated
    fixed = parse_settings(followed(raw, message)).endpoints["candidate"].autoscaling.decode
    assert fixed.target == 0.8


@pytest.mark.parametrize("target", [1, 1.5])
def test_a_kv_cache_target_at_or_above_full_is_never_reached(target):
    assert "allowed: a value below 1" in only_problem(
        _decode(metric="kv-cache-usage", target=target)
    )


def test_a_kv_cache_fraction_and_request_counts_are_taken():
    assert parse_settings(_decode(metric="kv-cache-usage", target=0.8))
    assert parse_settings(_decode(metric="running-requests", target=80))  # no upper bound


def test_a_colocated_kv_cache_target_is_judged_too():
    raw = canary_raw()
    edit(raw, f"{BASELINE}.autoscaling", {
        "minReplicas": 1, "maxReplicas": 2, "metric": "kv-cache-usage", "target": 90,
    })  # fmt: skip
    assert only_problem(raw).startswith(f"{BASELINE}.autoscaling.target: got 90.0; ")


def test_a_dpd_name_too_long_for_the_pod_pattern_is_refused_on_a_metric_only():
    """prefill-<name> longer than 46 characters: Kubernetes cuts its pods' generated names."""
    raw = _decode(metric="running-requests")
    long_name = "c" + "a" * 38  # 39: decode-<name> is 46, prefill-<name> would be 47
    edit(raw, f"{CANDIDATE}.name", long_name)
    edit(raw, f"{CANDIDATE}.namespace", "ns")  # the router Service's name still fits
    assert parse_settings(raw)  # the decode pool's Deployment still fits
    edit(raw, f"{CANDIDATE}.autoscaling", {"prefill": {
        "minReplicas": 1, "maxReplicas": 1, "metric": "waiting-requests", "target": 5,
    }})  # fmt: skip
    message = only_problem(raw)
    assert message.startswith(f"{CANDIDATE}.name: got '{long_name}'; allowed: at most 38 ")
    assert "Deployment 'prefill-" in message
    edit(raw, f"{CANDIDATE}.autoscaling.prefill.metric")
    edit(raw, f"{CANDIDATE}.autoscaling.prefill.query", "sum(vllm:num_requests_waiting)")
    assert parse_settings(raw)


@pytest.mark.parametrize(
    ("query", "said"),
    [
        ("   ", "a PromQL expression (the parser says: "),
        ('sum(vllm:num_requests_running{namespace="inference"', "a PromQL expression"),
        ("sum(rate(x[5m])", "a PromQL expression"),
        ("vllm:num_requests_running", "a query that returns one series"),
        ("sum by (pod) (vllm:num_requests_running)", "a query that returns one series"),
        ("sum without (engine) (vllm:num_requests_running)", "a query that returns one series"),
        ("topk(2, vllm:num_requests_running)", "a query that returns one series"),
        ("rate(vllm:prompt_tokens_total[1m])", "a query that returns one series"),
        ("vllm:num_requests_running[5m]", "an instant-vector query (this one gives a range"),
        ("42", "an instant-vector query (this one gives a scalar"),
        ('"text"', "an instant-vector query (this one gives a string"),
    ],
)
def test_a_query_that_is_not_promql_or_not_one_series_is_refused_naming_the_key(query, said):
    raw = _decode(query=query)
    message = only_problem(raw)
    key = f"{CANDIDATE}.autoscaling.decode.query"
    assert message.startswith(f"{key}: got {query!r}; allowed: {said}"), message


def test_the_fix_for_several_series_is_their_sum_and_it_parses():
    raw = _decode(query='sum by (pod) (vllm:num_requests_running{namespace="inference"})')
    message = only_problem(raw)
    assert "Fix: aggregate it to one series (no by/without): in Pulumi.<stack>.yaml set " in message
    fixed = parse_settings(followed(raw, message)).endpoints["candidate"].autoscaling.decode
    assert fixed.query.startswith("sum(sum by (pod) (")


@pytest.mark.parametrize(
    "query",
    [
        'sum(vllm:num_requests_running{namespace="inference"})',
        "sum(rate(vllm:prompt_tokens_total[1m]))",
        "histogram_quantile(0.9, sum by (le) (rate(vllm:e2e_request_latency_seconds_bucket[5m])))",
        "sum(vllm:num_requests_waiting) or vector(0)",
        "avg(vllm:kv_cache_usage_perc) * 100",
        "topk(1, vllm:num_requests_running)",
        "vector(1)",
        "clamp_min(sum(vllm:num_requests_waiting), 0)",
    ],
)
def test_a_query_of_one_series_is_taken(query):
    assert parse_settings(_decode(query=query)).endpoints["candidate"].autoscaling.decode.query
