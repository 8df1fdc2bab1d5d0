"""Several endpoints per stack: the map, where each runs, the GPUs they claim together, their
autoscaling and the traffic split (settings/endpoint/entries.py, settings/endpoint/traffic.py)."""

from __future__ import annotations

import pytest

from core.aws.aws_rules import ALB_FORWARD_TARGET_GROUPS_MAX, ALB_QUOTAS_URL
from settings import parse_settings
from tests.conftest import canary_raw, edit, split_of
from tests.settings.problems import followed, only_problem, problems_of

NS = "hyperpod-dpd"


def test_a_canary_stack_reads_as_two_endpoints_named_after_their_keys():
    s = parse_settings(canary_raw())
    listed = s.entries()
    assert [(x.key, x.config.name, x.config.mode) for x in listed] == [
        ("baseline", "baseline", "colocated"),
        ("candidate", "candidate", "dpd"),
    ]
    assert [x.resource_name for x in listed] == ["endpoint-baseline", "endpoint-candidate"]
    assert s.traffic == {"baseline": 95, "candidate": 5}


def test_a_stack_with_one_endpoint_keeps_its_one_entry(dev_raw):
    (entry,) = parse_settings(dev_raw).entries()
    assert (entry.key, entry.resource_name, entry.path) == (None, "endpoint", ("endpoint",))


def test_endpoint_and_endpoints_together_are_refused():
    raw = canary_raw()
    raw[f"{NS}:endpoint"] = {"name": "llama", "mode": "dpd"}
    message = only_problem(raw)
    assert message.startswith('hyperpod-dpd:endpoints: got ["baseline", "candidate"]')
    assert "either hyperpod-dpd:endpoint" in message and "not both" in message


def test_each_role_has_its_own_tensor_parallel_size():
    raw = canary_raw()
    edit(raw, f"{NS}:endpoints.candidate.prefill.tensorParallelSize", 4)
    edit(raw, f"{NS}:endpoints.candidate.decode.tensorParallelSize", None)
    [candidate] = [x for x in parse_settings(raw).entries() if x.key == "candidate"]
    prefill, decode = (
        candidate.numbers.of_role(r).tensor_parallel_size for r in ("prefill", "decode")
    )
    assert (prefill.value, decode.value) == (4, 8)
    assert prefill.key == f"{NS}:endpoints.candidate.prefill.tensorParallelSize"
    assert decode.key == f"{NS}:endpoints.candidate.tensorParallelSize"  # the endpoint's own


def test_a_pin_to_a_group_that_does_not_fit_names_the_groups_that_do():
    raw = canary_raw()
    edit(raw, f"{NS}:endpoints.baseline.groups", ["decode"])
    message = only_problem(raw)
    assert message.startswith('hyperpod-dpd:endpoints.baseline.groups: got ["decode"]')
    assert "groups that fit: colocated" in message


def test_a_dpd_role_pinned_to_two_groups_is_refused():
    raw = canary_raw()
    edit(raw, f"{NS}:instanceGroups.decode2", {"instanceType": "ml.p5.48xlarge",
          "instanceCount": 1, "role": "decode"})  # fmt: skip
    edit(raw, f"{NS}:endpoints.candidate.groups", ["prefill", "decode", "decode2"])
    assert "at most one decode group" in only_problem(raw)


def test_endpoints_that_can_claim_more_gpus_than_a_group_has_are_refused():
    """Two DPD endpoints on the one decode node: fine apart, an overcommit together."""
    raw = canary_raw()
    raw[f"{NS}:endpoints"]["second"] = {"mode": "dpd"}
    raw[f"{NS}:traffic"] = {"baseline": 90, "candidate": 5, "second": 5}
    problems = problems_of(raw)
    assert len(problems) == 2  # the prefill group and the decode group
    decode = next(p for p in problems if "group decode " in p)
    assert decode.startswith("hyperpod-dpd:instanceGroups.decode.instanceCount: got 1")
    assert "group decode has 1 node, the pools want 2" in decode
    assert (
        "candidate decode 1 (hyperpod-dpd:endpoints.candidate.decode.replicas); "
        "second decode 1 (hyperpod-dpd:endpoints.second.decode.replicas)"
    ) in decode


def test_the_budget_counts_each_pool_at_its_autoscaling_maximum():
    raw = canary_raw()
    edit(raw, f"{NS}:endpoints.candidate.autoscaling", {
        "decode": {"minReplicas": 1, "maxReplicas": 3, "metric": "running-requests",
                   "target": 16},
    })  # fmt: skip
    message = only_problem(raw)
    assert "group decode has 1 node, the pools want 3 (candidate decode 3 (" in message
    assert "endpoints.candidate.autoscaling.decode.maxReplicas)); 2 replicas would stay" in message
    edit(raw, f"{NS}:instanceGroups.decode.instanceCount", 3)
    assert parse_settings(raw).endpoints["candidate"].autoscaling.decode.max_replicas == 3


@pytest.mark.parametrize(
    ("scaling", "names"),
    [
        ({"maxReplicas": 2, "metric": "running-requests", "target": 4}, "autoscaling per role"),
        (
            {
                "prefill": {
                    "maxReplicas": 1,
                    "minReplicas": 2,
                    "metric": "waiting-requests",
                    "target": 1,
                }
            },
            "autoscaling.prefill.minReplicas: got 2",
        ),
        ({"prefill": {"maxReplicas": 1, "target": 1}}, "neither metric nor query"),
        (
            {
                "prefill": {
                    "maxReplicas": 1,
                    "metric": "waiting-requests",
                    "query": "up",
                    "target": 1,
                }
            },
            "both metric and query",
        ),
    ],
)
def test_autoscaling_of_a_dpd_endpoint_is_per_role_and_whole(scaling, names):
    raw = canary_raw()
    edit(raw, f"{NS}:endpoints.candidate.autoscaling", scaling)
    message = only_problem(raw)
    assert "hyperpod-dpd:endpoints.candidate.autoscaling" in message and names in message


def test_autoscaling_of_a_colocated_endpoint_is_its_one_pool():
    raw = canary_raw()
    edit(raw, f"{NS}:endpoints.baseline.autoscaling", {"prefill": {"maxReplicas": 1,
         "metric": "waiting-requests", "target": 1}})  # fmt: skip
    assert "for mode colocated, one pool" in only_problem(raw)


@pytest.mark.parametrize(
    ("traffic", "names"),
    [
        ({"baseline": 90, "candidate": 5}, "weights summing to 100 (these sum to 95)"),
        ({"baseline": 105, "candidate": -5}, "hyperpod-dpd:traffic.baseline: got 105"),
        ({"baseline": 95, "canary": 5}, "hyperpod-dpd:traffic.canary: got 5; allowed: a key"),
        ({"baseline": 97.5, "candidate": 2.5}, "hyperpod-dpd:traffic.baseline"),
    ],
)
def test_bad_weights_are_refused_naming_the_key(traffic, names):
    raw = canary_raw()
    raw[f"{NS}:traffic"] = traffic
    assert any(names in p for p in problems_of(raw))


def test_autoscaling_needs_the_prometheus_workspace_of_observability():
    raw = canary_raw()
    edit(raw, f"{NS}:observability.enabled", False)
    edit(raw, f"{NS}:endpoints.candidate.autoscaling", {
        "decode": {"maxReplicas": 1, "metric": "running-requests", "target": 8},
    })  # fmt: skip
    message = only_problem(raw)
    assert message.startswith("hyperpod-dpd:observability.enabled: got false")
    # The canary stack's SLOs need it too: one problem names every key that does.
    assert "hyperpod-dpd:endpoints.candidate.autoscaling, hyperpod-dpd:slo is set" in message
    assert "the scaler queries and the SLO rules and alerts live in" in message


def test_a_split_takes_at_most_the_target_groups_one_alb_forward_action_takes():
    # An ALB forward action splits between at most 5 target groups (ELB quotas, not adjustable):
    # a sixth endpoint would fail at the listener, after everything before it was created.
    assert parse_settings(split_of(ALB_FORWARD_TARGET_GROUPS_MAX)).traffic
    raw = split_of(ALB_FORWARD_TARGET_GROUPS_MAX + 1)
    message = only_problem(raw)
    assert message.startswith("hyperpod-dpd:traffic: got {")
    assert "at most 5 endpoints (6 here)" in message
    assert ALB_QUOTAS_URL in message
    fixed = parse_settings(followed(raw, message))
    assert fixed.traffic == {"baseline": 95, "candidate": 5} | dict.fromkeys(
        ["colocated-2", "colocated-3", "colocated-4"], 0
    )


def test_weights_short_of_100_are_fixed_keeping_the_canarys_share():
    raw = canary_raw()
    raw[f"{NS}:traffic"] = {"baseline": 85, "candidate": 5}
    [problem] = [p for p in problems_of(raw) if "summing to 100" in p]
    assert '{"baseline": 95, "candidate": 5}' in problem  # not 94/6: the canary stays at 5%
