"""autoscaling minReplicas 0 (settings/endpoint/traffic.py check_scale_from_zero): taken for an endpoint
the split sends no request and for a pool on a query of the user's; refused for a pool on a
built-in metric, which reads the pool's own pods and so never scales it up from none. Each
fix printed is followed on the same stack, which then parses."""

from __future__ import annotations

from settings import parse_settings
from tests.conftest import canary_raw, edit, stack_raw
from tests.settings.problems import followed, only_problem

NS = "hyperpod-dpd"
CANDIDATE = f"{NS}:endpoints.candidate"


def _scaling(min_replicas: int = 0, **signal) -> dict:
    signal = signal or {"metric": "waiting-requests"}
    return {"minReplicas": min_replicas, "maxReplicas": 1, "target": 4, **signal}


def _prefill_from_zero(**signal) -> dict:
    raw = canary_raw()
    edit(raw, f"{CANDIDATE}.autoscaling", {"prefill": _scaling(**signal)})
    return raw


def test_a_pool_from_zero_on_a_metric_of_an_endpoint_with_weight_is_refused():
    message = only_problem(_prefill_from_zero())
    key = f"{CANDIDATE}.autoscaling.prefill.minReplicas"
    assert message.startswith(f"{key}: got 0; allowed: at least 1 while the prefill pool scales ")
    assert "on waiting-requests (5% of traffic)" in message
    assert "never scales it up from 0" in message
    assert f"Fix: pulumi config set --path '{key}' 1 " in message
    assert 'set hyperpod-dpd:traffic to {"baseline": 100, "candidate": 0}' in message


def test_the_printed_min_replicas_fix_makes_the_problem_go():
    raw = _prefill_from_zero()
    s = parse_settings(followed(raw, only_problem(raw)))
    assert s.endpoints["candidate"].autoscaling.prefill.min_replicas == 1


def test_an_idle_canary_may_scale_to_zero():
    raw = _prefill_from_zero()
    raw[f"{NS}:traffic"] = {"baseline": 100, "candidate": 0}
    assert parse_settings(raw).endpoints["candidate"].autoscaling.prefill.min_replicas == 0


def test_a_pool_from_zero_on_a_query_of_ones_own_is_taken():
    """A query may read what is there with no pod (the router's requests): KEDA then does see
    demand; the stack cannot tell, so it takes it."""
    raw = _prefill_from_zero(query='sum(rate(router_requests_total{service="candidate"}[1m]))')
    assert parse_settings(raw).endpoints["candidate"].autoscaling.prefill.query


def test_the_single_endpoint_from_zero_on_a_metric_is_refused():
    """No split: its router is reached directly, and the pool never comes back either."""
    raw = stack_raw("dev")
    edit(raw, f"{NS}:endpoint.autoscaling", {"decode": _scaling(metric="running-requests")})
    message = only_problem(raw)
    key = f"{NS}:endpoint.autoscaling.decode.minReplicas"
    assert message.startswith(f"{key}: got 0; allowed: at least 1 while the decode pool ")
    assert "(its router is reached directly)" in message
    assert "weight 0 (an idle canary)" not in message  # no split to idle it in
    parse_settings(followed(raw, message))


def test_a_colocated_endpoint_from_zero_on_a_metric_is_refused():
    raw = canary_raw()
    edit(raw, f"{NS}:endpoints.baseline.autoscaling", {
        "minReplicas": 0, "maxReplicas": 2, "metric": "running-requests", "target": 16,
    })  # fmt: skip
    message = only_problem(raw)
    key = f"{NS}:endpoints.baseline.autoscaling.minReplicas"
    assert message.startswith(f"{key}: got 0; allowed: at least 1 while the colocated pool ")
    assert "(95% of traffic)" in message
    assert 'hyperpod-dpd:traffic to {"baseline": 0, "candidate": 100}' in message
    parse_settings(followed(raw, message))
