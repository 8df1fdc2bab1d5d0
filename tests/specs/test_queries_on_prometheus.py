"""Every autoscaling query the plan renders, run on a real Prometheus (the referee) scraping a fake
fleet of vLLM workers (tests/specs/fake_vllm.py: the pinned vLLM's series, from the generated
core/vllm/vllm_metrics.json). Endpoints `llama` and `llama-small` side by side, DPD and colocated,
in several namespaces: each query returns exactly one series, holding its own pool's value.

A user's query is judged at plan time by settings/endpoint/promql.py; here that judgement is held to what
Prometheus does with the same queries (it errs on what the parser refuses as no PromQL, and
returns several series where the parser says it can).

The pair's trigger (a follower pool held at its share of the leader's replicas) reads the
leader's reporting pods times the ratio, 0 where none reports: what KEDA's AverageValue target of
1 turns into ceil(value) replicas. The fleet's counters stand still (their rate is 0); the
prompt-tokens rate is checked to the token on a backfilled Prometheus whose counters grow."""

from __future__ import annotations

import math
import shutil
import time
from pathlib import Path

import promql_parser
import pytest
import yaml

from core.vllm.pod_names import pod_name_pattern, worker_deployment
from core.vllm.scaling_signals import SIGNALS
from hyperpod_dpd.demo.vllm_traffic import Minute, openmetrics, pod
from settings.endpoint.autoscaling import AutoscalingConfig, ScalingConfig
from settings.endpoint.model import EndpointConfig
from settings.endpoint.promql import ONE, SEVERAL, series_of
from settings.endpoint.scaling_pair import floor_of
from specs.scaling import pair_trigger, query_of
from tests.specs import fake_vllm, prometheus_server

pytestmark = [pytest.mark.long, pytest.mark.xdist_group("prometheus")]

GOLDEN = Path(__file__).parent / "golden"
ENDPOINTS = [
    ("team", "llama", "dpd"),
    ("team", "llama-small", "dpd"),
    ("colo", "llama", "colocated"),
    ("colo", "llama-small", "colocated"),
    ("mixed", "llama", "colocated"),
    ("mixed", "llama-small", "dpd"),
    # The canary stack's endpoints, whose plan-rendered queries are in tests/specs/golden/.
    ("inference", "baseline", "colocated"),
    ("inference", "candidate", "dpd"),
]
POOLS = {"dpd": ("prefill", "decode"), "colocated": ("colocated",)}
BUILT_IN = [
    (ns, name, mode, pool, metric)
    for ns, name, mode in ENDPOINTS
    for pool in POOLS[mode]
    for metric in SIGNALS
]


# Module-scoped: a Prometheus scraping the fleet every second, kept to the session's end, cost its
# worker more CPU than all these tests (it scraped on through every test after them).
@pytest.fixture(scope="module")
def fleet():
    f = fake_vllm.fleet_of(ENDPOINTS)
    fake_vllm.serve(f)
    yield f
    fake_vllm.stop(f)


@pytest.fixture(scope="module")
def prometheus(fleet, tmp_path_factory):
    for tool in ("prometheus", "promtool"):
        if shutil.which(tool) is None:
            pytest.fail(f"no {tool} on PATH: {prometheus_server.INSTALL_HINT}", pytrace=False)
    targets = [(p.port, {"pod": p.name, "namespace": p.namespace}) for p in fleet.pods]
    server = prometheus_server.start(
        tmp_path_factory.mktemp("prometheus"),
        targets,
        'count(count_over_time(up{job="vllm"}[1m]) >= 2)',
    )
    yield server
    server.stop()


def _rendered(ns: str, name: str, mode: str, pool: str, metric: str) -> tuple[str, str]:
    """(query, metricType) as the plan renders them (specs/scaling.py query_of)."""
    e = EndpointConfig(name=name, namespace=ns, mode=mode)
    top = SIGNALS[metric].top
    scaling = ScalingConfig(max_replicas=2, metric=metric, target=0.5 if top else 4)
    return query_of(e, pool, scaling)


def _pods(fleet, ns: str, name: str, pool: str) -> set[str]:
    return {p.name for p in fleet.pods if (p.namespace, p.endpoint, p.pool) == (ns, name, pool)}


def _expected(fleet, metric_name: str, aggregate: str, ns: str, name: str, pool: str) -> float:
    values = fleet.pool_values(metric_name, ns, name, pool)
    assert values, (ns, name, pool)
    if SIGNALS_BY_METRIC[metric_name].metric.type == "counter":
        return 0.0  # the fleet's counters stand still: their rate is 0
    return sum(values) if aggregate == "sum" else sum(values) / len(values)


SIGNALS_BY_METRIC = {s.metric.name: s for s in SIGNALS.values()}


@pytest.mark.parametrize(("ns", "name", "mode", "pool", "metric"), BUILT_IN)
def test_a_built_in_query_returns_its_own_pools_value_alone(
    prometheus, fleet, ns, name, mode, pool, metric
):
    query, metric_type = _rendered(ns, name, mode, pool, metric)
    signal = SIGNALS[metric]
    assert metric_type == signal.metric_type
    result = prometheus.query(query)
    assert result["resultType"] == "vector"
    assert len(result["result"]) == 1, (query, result)
    got = float(result["result"][0]["value"][1])
    want = _expected(fleet, signal.metric.name, signal.aggregate, ns, name, pool)
    assert math.isclose(got, want, rel_tol=1e-12), (query, got, want)
    # The selector inside the aggregation takes exactly the pool's pods, each engine's series.
    inner = str(promql_parser.parse(query).expr)
    series = prometheus.query(inner)["result"]
    assert {s["metric"]["pod"] for s in series} == _pods(fleet, ns, name, pool), inner
    assert len(series) == len(_pods(fleet, ns, name, pool)) * len(fake_vllm.ENGINES)


def test_every_built_in_query_is_one_series_by_the_plan_time_parser_too():
    assert all(series_of(promql_parser.parse(_rendered(*case)[0])) == ONE for case in BUILT_IN)


def _golden_queries() -> list[tuple[str, str, str]]:
    """(endpoint, trigger name, query) of every prometheusTrigger in the golden plan files."""
    found = []
    for path in sorted(GOLDEN.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            spec = (doc or {}).get("spec", {})
            specs = [spec.get("autoScalingSpec")]
            pd = spec.get("pdSpec", {}).get("autoScalingSpec", {})
            specs += [pd.get("prefillAutoScaling"), pd.get("decodingAutoScaling")]
            for s in filter(None, specs):
                for trigger in s.get("prometheusTriggerList") or [s["prometheusTrigger"]]:
                    found.append((doc["metadata"]["name"], trigger["name"], trigger["query"]))
    return found


def test_the_queries_of_the_rendered_plans_return_one_series_each(prometheus, fleet):
    queries = _golden_queries()
    # The canary's autoscaled pools: two of DPD, one colocated, and a pair's two pools and the
    # decode pool's second trigger.
    assert len(queries) == 6
    for endpoint, trigger, query in queries:
        result = prometheus.query(query)["result"]
        assert len(result) == 1, (trigger, query, result)
        pool = trigger.removeprefix(f"{endpoint}-").removesuffix("-pair")
        inner = promql_parser.parse(query)
        if isinstance(inner, promql_parser.AggregateExpr) and "pod=~" in query:
            pods = {s["metric"]["pod"] for s in prometheus.query(str(inner.expr))["result"]}
            assert pods == _pods(fleet, "inference", endpoint, pool), trigger


def test_the_selector_before_took_a_siblings_pods_and_the_old_metric_nothing(prometheus, fleet):
    """Why the selectors and names changed: both would pass unnoticed without this referee."""
    broad = prometheus.query('vllm:num_requests_running{namespace="team",pod=~"prefill-llama-.*"}')
    pods = {s["metric"]["pod"] for s in broad["result"]}
    assert _pods(fleet, "team", "llama-small", "prefill") <= pods
    assert prometheus.query("sum(vllm:gpu_cache_usage_perc)")["result"] == []  # KEDA reads 0


def test_the_pod_pattern_is_prometheus_regex_as_well_as_pythons(prometheus, fleet):
    """RE2 (Prometheus) and Python's re agree on every pod of a namespace."""
    import re

    for ns, name, mode in ENDPOINTS:
        for pool in POOLS[mode]:
            pattern = pod_name_pattern(worker_deployment(name, pool))
            python = {
                p.name for p in fleet.pods if p.namespace == ns and re.fullmatch(pattern, p.name)
            }
            selector = f'namespace="{ns}",pod=~"{pattern}"'
            got = prometheus.query(f"group by (pod) (up{{{selector}}})")["result"]
            assert {s["metric"]["pod"] for s in got} == python == _pods(fleet, ns, name, pool)


ONE_SERIES = [
    'sum(vllm:num_requests_running{namespace="team"})',
    "sum(rate(vllm:prompt_tokens_total[1m]))",
    "histogram_quantile(0.9, sum by (le) (rate(vllm:e2e_request_latency_seconds_bucket[1m])))",
    "sum(vllm:num_requests_waiting) or vector(0)",
    "avg(vllm:kv_cache_usage_perc) * 100",
    "topk(1, vllm:num_requests_running)",
    "vector(1)",
    "clamp_min(sum(vllm:num_requests_waiting), 0)",
    "max(vllm:num_requests_running) - min(vllm:num_requests_running)",
    "absent(vllm:no_such_series)",
]
SEVERAL_SERIES = [
    "vllm:num_requests_running",
    "sum by (pod) (vllm:num_requests_running)",
    "sum without (engine) (vllm:num_requests_running)",
    "topk(2, vllm:num_requests_running)",
    "rate(vllm:prompt_tokens_total[1m])",
    'count_values("v", vllm:num_requests_running)',
    "sum(vllm:num_requests_running) + on() group_right vllm:num_requests_waiting",
]
NOT_PROMQL = [
    "",
    "   ",
    'sum(vllm:num_requests_running{namespace="team"',
    "sum(rate(x[5m])",
    "sum(x) by",
    "rate(x[5q])",
]


@pytest.mark.parametrize("query", ONE_SERIES)
def test_what_the_parser_takes_as_one_series_is_one_on_prometheus(prometheus, query):
    assert series_of(promql_parser.parse(query)) == ONE
    assert len(prometheus.query(query)["result"]) <= 1


@pytest.mark.parametrize("query", SEVERAL_SERIES)
def test_what_the_parser_refuses_as_several_series_is_several_on_prometheus(prometheus, query):
    assert series_of(promql_parser.parse(query)) == SEVERAL
    assert len(prometheus.query(query)["result"]) > 1


@pytest.mark.parametrize("query", NOT_PROMQL)
def test_what_the_parser_refuses_as_no_promql_prometheus_refuses_too(prometheus, query):
    with pytest.raises(ValueError):
        promql_parser.parse(query)
    assert prometheus.error_of(query) is not None


# --- the pair's trigger: the leader's reporting pods times the ratio -------------------------

RATIOS = [(1, 1), (1, 2), (2, 3), (3, 2), (1, 3), (3, 1)]


def _pair(ns: str, name: str, prefill: int, decode: int):
    scaling = ScalingConfig(max_replicas=8, metric="running-requests", target=8)
    autoscaling = AutoscalingConfig(prefill=scaling, decode=scaling,
                                    ratio={"prefill": prefill, "decode": decode})  # fmt: skip
    e = EndpointConfig(name=name, namespace=ns, mode="dpd", autoscaling=autoscaling)
    ratio = autoscaling.ratio
    return ratio, pair_trigger(e, ratio.follower, "https://example")


@pytest.mark.parametrize(("prefill", "decode"), RATIOS)
def test_the_pairs_query_asks_keda_for_the_followers_share_of_the_leaders_pods(
    prometheus, fleet, prefill, decode
):
    for ns, name, mode in ENDPOINTS:
        if mode != "dpd":
            continue
        ratio, trigger = _pair(ns, name, prefill, decode)
        assert (trigger.target_value, trigger.metric_type) == (1, "Average")
        result = prometheus.query(trigger.query)["result"]
        assert len(result) == 1, (trigger.query, result)
        leaders = len(_pods(fleet, ns, name, ratio.leader))
        value = float(result[0]["value"][1])
        assert value == leaders * ratio.share(ratio.follower) / ratio.share(ratio.leader)
        # KEDA's AverageValue: the HPA asks for ceil(value / target) replicas of the follower.
        assert math.ceil(value / trigger.target_value) == floor_of(ratio, leaders)


def test_the_pairs_query_never_reads_empty(prometheus):
    """No leader pod reports (none yet, or all gone): 0, one series, not an empty result."""
    _, trigger = _pair("nowhere", "llama", 1, 2)
    result = prometheus.query(trigger.query)["result"]
    assert [float(r["value"][1]) for r in result] == [0.0]


# --- the prompt-tokens rate, to the token ----------------------------------------------------


@pytest.fixture(scope="module")
def growing(tmp_path_factory):
    """Counters that grow: two prefill pods of `llama` (10,000 and 20,000 prompt tokens/s), its
    decoder and a sibling's prefiller, minute by minute for 10 minutes up to now."""
    pods = [
        pod("llama", "prefill", Minute(prompt_tokens=600_000), seed=1),
        pod("llama", "prefill", Minute(prompt_tokens=1_200_000), seed=2),
        pod("llama", "decode", Minute(prompt_tokens=5_000_000)),
        pod("llama-small", "prefill", Minute(prompt_tokens=7_000_000)),
    ]
    start = int(time.time()) - 10 * 60
    server = prometheus_server.serve_backfill(tmp_path_factory.mktemp("growing"),
                                              openmetrics(pods, start, 10))  # fmt: skip
    yield server
    server.stop()


def test_the_prompt_tokens_query_reads_its_own_pools_tokens_per_second(growing):
    query, metric_type = _rendered("inference", "llama", "dpd", "prefill",
                                   "prompt-tokens-per-second")  # fmt: skip
    assert metric_type == "Average"  # KEDA divides by the replicas: a target per prefiller
    result = growing.query(query)["result"]
    assert len(result) == 1, (query, result)
    assert math.isclose(float(result[0]["value"][1]), 30_000, rel_tol=1e-9)
