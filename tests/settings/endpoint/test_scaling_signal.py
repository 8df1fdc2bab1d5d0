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
    # 1 / 1.1: the HPA acts only once the signal passes the target by its 10% tolerance.
    assert message.startswith(f"{key}: got 80.0; allowed: a value below 0.909: ")
    assert "vllm:kv_cache_usage_perc, a fraction of the KV cache, 0 to 1" in message
    assert "1 means 100 percent usage" in message  # vLLM's own help text, generated
    fixed = parse_settings(followed(raw, message)).endpoints["candidate"].autoscaling.decode
    assert fixed.target == 0.8


@pytest.mark.parametrize("target", [0.95, 1, 1.5])
def test_a_kv_cache_target_the_hpa_never_passes_is_refused(target):
    """At 0.95 a full cache is 1.05 x target: inside the HPA's tolerance, never a scale-out."""
    message = only_problem(_decode(metric="kv-cache-usage", target=target))
    assert "allowed: a value below 0.909" in message and "horizontal-pod-autoscale" in message


def test_a_kv_cache_fraction_and_request_counts_are_taken():
    assert parse_settings(_decode(metric="kv-cache-usage", target=0.8))
    assert parse_settings(_decode(metric="kv-cache-usage", target=0.9))
    assert parse_settings(_decode(metric="running-requests", target=29))  # maxNumSeqs 32


@pytest.mark.parametrize("target", [32, 30, 80])
def test_a_running_requests_target_vllm_never_passes_is_refused(target):
    """The candidate's decoders run at most --max-num-seqs 32 requests each (decode.maxNumSeqs's
    default): a target of 32 or more is never passed, nor one the 10% tolerance keeps out of
    reach (above 29.1)."""
    raw = _decode(metric="running-requests", target=target)
    message = only_problem(raw)
    key = f"{CANDIDATE}.autoscaling.decode.target"
    assert message.startswith(f"{key}: got {float(target)}; allowed: a value below 29.1: ")
    assert f"--max-num-seqs 32 ({CANDIDATE}.decode.maxNumSeqs)" in message
    fixed = parse_settings(followed(raw, message)).endpoints["candidate"].autoscaling.decode
    assert fixed.target == 25


def test_a_running_requests_target_is_judged_at_the_batch_the_args_give():
    """--max-num-seqs in the role's args is what vLLM runs with (settings/endpoint/numbers.py),
    and each of --data-parallel-size's engines runs that many."""
    raw = _decode(metric="running-requests", target=100)
    edit(raw, f"{CANDIDATE}.decode.args", ["--max-num-seqs", "64"])
    message = only_problem(raw)
    assert f"--max-num-seqs 64 (--max-num-seqs in {CANDIDATE}.decode.args)" in message
    edit(raw, f"{CANDIDATE}.decode.args", ["--max-num-seqs", "64", "--data-parallel-size", "2"])
    edit(raw, f"{CANDIDATE}.decode.tensorParallelSize", 4)
    assert parse_settings(raw)  # two engines of 64: 128 at most, 100 is passed


def test_a_prefill_running_requests_target_is_judged_at_the_prefillers_batch():
    raw = canary_raw()
    edit(raw, f"{CANDIDATE}.autoscaling", {"prefill": {
        "minReplicas": 1, "maxReplicas": 1, "metric": "running-requests", "target": 16,
    }})  # fmt: skip
    message = only_problem(raw)  # prefill.maxNumSeqs 16
    assert message.startswith(f"{CANDIDATE}.autoscaling.prefill.target: got 16.0; ")


@pytest.mark.parametrize("seconds", [3601, 86400])
def test_a_stabilization_window_above_an_hour_is_refused_citing_kubernetes(seconds):
    raw = _decode(metric="waiting-requests", scaleDownStabilizationSeconds=seconds)
    message = only_problem(raw)
    key = f"{CANDIDATE}.autoscaling.decode.scaleDownStabilizationSeconds"
    assert message.startswith(f"{key}: got {seconds}; allowed: at most 3600 seconds: ")
    assert "MaxStabilizationWindowSeconds" in message
    fixed = parse_settings(followed(raw, message)).endpoints["candidate"].autoscaling.decode
    assert fixed.scale_down_stabilization_seconds == 3600


def test_a_stabilization_window_of_an_hour_is_taken():
    raw = _decode(metric="waiting-requests", scaleDownStabilizationSeconds=3600)
    assert parse_settings(raw).endpoints["candidate"].autoscaling.decode


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
        # Grafana's variables, which only Grafana substitutes: KEDA's result is empty, read as 0.
        ('sum(vllm:num_requests_running{namespace="$namespace"})',
         "label values, not dashboard variables: namespace holds $namespace, which only Grafana"),
        ('sum(vllm:num_requests_running{pod=~"${pod:regex}"})',
         "label values, not dashboard variables: pod holds ${pod:regex}, which only Grafana"),
        ('sum(vllm:num_requests_running{namespace="[[ns]]"})',
         "label values, not dashboard variables: namespace holds [[ns]], which only Grafana"),
    ],
)  # fmt: skip
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


@pytest.mark.parametrize(
    ("query", "read", "meant"),
    [
        # vLLM v0's name of the KV cache usage, renamed before the pinned release.
        ("avg(vllm:gpu_cache_usage_perc)", "vllm:gpu_cache_usage_perc", "vllm:kv_cache_usage_perc"),
        # A counter's series is exposed with _total, a histogram's with _bucket.
        ("sum(rate(vllm:prompt_tokens[1m]))", "vllm:prompt_tokens", "vllm:prompt_tokens_total"),
        ("histogram_quantile(0.9, sum by (le) (rate(vllm:time_to_first_token_seconds[5m])))",
         "vllm:time_to_first_token_seconds", "vllm:time_to_first_token_seconds_bucket"),
        ('sum({__name__="vllm:num_requests_runing"})', "vllm:num_requests_runing",
         "vllm:num_requests_running"),
    ],
)  # fmt: skip
def test_a_query_over_a_series_the_pinned_vllm_does_not_export_is_refused(query, read, meant):
    """KEDA reads the empty result as 0: the pool would never scale out."""
    raw = _decode(query=query)
    message = only_problem(raw)
    key = f"{CANDIDATE}.autoscaling.decode.query"
    assert message.startswith(f"{key}: got ") and "; allowed: a query over series the " in message
    assert "vLLM 0.19.0 exports" in message and f"{read} is none of them" in message
    assert f"did you mean {meant}?" in message
    fixed = parse_settings(followed(raw, message)).endpoints["candidate"].autoscaling.decode
    assert meant in fixed.query


def test_the_fix_for_a_dashboard_variable_writes_a_value_and_it_is_taken():
    raw = _decode(query='sum(vllm:num_requests_running{namespace="$namespace"})')
    fixed = parse_settings(followed(raw, only_problem(raw))).endpoints["candidate"]
    assert fixed.autoscaling.decode.query == 'sum(vllm:num_requests_running{namespace="inference"})'


def test_a_regex_anchor_and_other_exporters_series_are_not_judged():
    for query in ('sum(vllm:num_requests_running{pod=~"decode-.*$"})', 'sum(up{job="router"})'):
        assert parse_settings(_decode(query=query))
