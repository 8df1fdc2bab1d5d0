"""A step is applied only when it changes the routing alone: the listener rule's weights and the
alert rules whose rollback lines name them, on the offline plans of the two splits."""

from __future__ import annotations

import yaml

from hyperpod_dpd.diff.compare import diff_plans, load_plan
from hyperpod_dpd.rollout.routing import _rules_beyond_routing, judge_diff, plan_with, routing_of
from settings.stack_file import read_stack, with_value
from tests.hyperpod_dpd.rollout.conftest import STACK, make_project

FORWARD = "aws:lb/listenerRule:ListenerRule::traffic-forward"
RULES = "aws:amp/ruleGroupNamespace:RuleGroupNamespace::observability-rules"


def test_each_step_of_the_canary_changes_the_forward_and_the_rollback_lines_alone(tmp_path):
    project = make_project(tmp_path / "project", "healthy")
    read = read_stack(project, STACK)
    first = routing_of(project, read, {"baseline": 95, "candidate": 5},
                       {"baseline": 75, "candidate": 25})  # fmt: skip
    assert first.refused == [] and {u.rsplit("$", 1)[1] for u in first.urns} == {FORWARD}
    # At 100 the candidate is the split's heaviest: its alerts lose their rollback lines and the
    # comparison with the baseline, in the rule group alone.
    last = routing_of(project, read, {"baseline": 50, "candidate": 50},
                      {"baseline": 0, "candidate": 100})  # fmt: skip
    assert last.refused == [] and {u.rsplit("$", 1)[1] for u in last.urns} == {FORWARD, RULES}


def test_a_diff_that_moves_more_than_the_routing_is_refused_naming_what(tmp_path):
    from hyperpod_dpd.plan.planner import make_plan

    project = make_project(tmp_path / "project", "healthy")
    read = read_stack(project, STACK)
    base = plan_with(project, read, {"baseline": 95, "candidate": 5})
    endpoints = yaml.safe_load((project / f"Pulumi.{STACK}.yaml").read_text())["config"][
        "hyperpod-dpd:endpoints"
    ]
    endpoints["candidate"]["maxModelLen"] = 8192
    changed = with_value(with_value(read, "hyperpod-dpd:traffic", {"baseline": 75, "candidate": 25}),
                         "hyperpod-dpd:endpoints", endpoints)  # fmt: skip
    make_plan(project, STACK, tmp_path / "head", read=changed)
    routing = judge_diff(diff_plans(base, load_plan(tmp_path / "head")))
    refused = "\n".join(routing.refused)
    assert "InferenceEndpointConfig endpoint-candidate-iec: " in refused
    assert "~ Kubernetes manifest inferenceendpointconfig.healthy.candidate.yaml" in refused
    assert not any("traffic-forward" in line for line in routing.refused)  # its weights alone


def _rule_file(action: str, ttft_limit: float = 3.0, comparison: bool = True) -> str:
    rules = [
        {"record": "hyperpod_dpd:ttft_seconds:p99_5m", "expr": "histogram_quantile(0.99, x)"},
        {"alert": "HyperpodDpdTtftP99AboveSlo", "expr": f"y > {ttft_limit}",
         "annotations": {"summary": "slow", "action": action}},
    ]  # fmt: skip
    if comparison:
        rules.append({"alert": "HyperpodDpdCandidateWorseThanBaseline", "expr": "z",
                      "annotations": {"summary": "worse", "action": action}})  # fmt: skip
    return yaml.safe_dump({"groups": [{"name": "hyperpod-dpd-candidate", "rules": rules}]})


def test_a_rule_file_may_change_its_rollback_lines_and_the_comparison_alert_alone():
    before = _rule_file("Roll the candidate back: pulumi config set ... 100")
    assert _rules_beyond_routing(before, _rule_file("scale out")) == []
    assert _rules_beyond_routing(before, _rule_file("scale out", comparison=False)) == []
    assert _rules_beyond_routing(before, _rule_file("scale out", ttft_limit=5.0)) == [
        "data: rule group hyperpod-dpd-candidate: rules other than the rollback lines"
    ]
    assert _rules_beyond_routing(before, yaml.safe_dump({"groups": []})) == [
        "data: rule group hyperpod-dpd-candidate removed"
    ]
