"""Components fail fast with the rules' messages, before registering anything."""

from __future__ import annotations

import pulumi
import pytest

from policies.enforce import PolicyViolationError, camel_keys, plain
from settings import parse_settings
from tests.conftest import edit, run_stack, stack_raw


def test_endpoint_component_stops_before_registering():
    raw = edit(stack_raw("dev"), "hyperpod-dpd:endpoint.routingThreshold", 100)
    with pytest.raises(PolicyViolationError) as info:
        run_stack(raw)
    assert isinstance(info.value, pulumi.RunError)  # no traceback under `pulumi up`
    assert str(info.value).startswith(
        "1 mandatory policy violation(s):\n  hyperpod-dpd-routing-threshold: endpoint-iec: routingThreshold 100"
    )


def test_hyperpod_component_names_the_group_key():
    raw = edit(
        stack_raw("dev"), "hyperpod-dpd:instanceGroups.decode.instanceType", "ml.g6e.48xlarge"
    )
    with pytest.raises(PolicyViolationError) as info:
        run_stack(raw)
    (violation,) = info.value.violations
    assert violation.urn.endswith("$aws-native:sagemaker:Cluster::hyperpod-cluster")
    assert "hyperpod-dpd:instanceGroups.decode.instanceType" in violation.message


def test_advisory_findings_do_not_stop_a_deploy_unless_the_stack_says_so():
    raw = edit(stack_raw("dev"), "hyperpod-dpd:endpoint.prefill.replicas", 2)
    run_stack(raw)  # routing-strategy advisory only
    edit(raw, "hyperpod-dpd:policy", {"advisoriesMandatory": True})
    with pytest.raises(PolicyViolationError, match="hyperpod-dpd-routing-strategy"):
        run_stack(raw)


def test_unknown_rule_name_in_enforcement_is_a_config_error():
    raw = edit(
        stack_raw("dev"), "hyperpod-dpd:policy", {"enforcement": {"hyperpod-dpd-shm": "mandatory"}}
    )
    with pytest.raises(Exception, match=r"hyperpod-dpd:policy.enforcement.hyperpod-dpd-shm: got"):
        parse_settings(raw)


def test_plain_and_camel_keys():
    out = pulumi.Output.from_input("x")
    assert plain({"a": [out, 1]}) == {"a": ["[unknown]", 1]}
    assert camel_keys(
        {"override_vpc_config": {"security_group_ids": [1]}, "hyperpod-dpd/role": "x"}
    ) == {
        "overrideVpcConfig": {"securityGroupIds": [1]},
        "hyperpod-dpd/role": "x",
    }
