"""Security group and rule descriptions as EC2 takes them (core/aws/aws_rules.py): the canary's first
`pulumi up` failed on an apostrophe in traffic-sg's description and in a rule's. A
group's description cannot change in place, so it must be right before the first deploy."""

from __future__ import annotations

import pytest

from core.aws.aws_rules import ec2_description_problem
from core.vocabulary import SECURITY_GROUP_TYPE, SG_EGRESS_TYPE, SG_INGRESS_TYPE
from settings import parse_settings
from specs.desired import desired_state
from tests.conftest import stack_raw


@pytest.mark.parametrize("stack", ["dev", "prod", "canary"])
def test_every_security_group_and_rule_description_is_one_ec2_takes(stack):
    resources = desired_state(parse_settings(stack_raw(stack)), "hyperpod-dpd", stack).resources()
    described = {
        r.name: r.props["description"]
        for r in resources
        if r.type in (SECURITY_GROUP_TYPE, SG_INGRESS_TYPE, SG_EGRESS_TYPE)
    }
    assert len(described) >= 8  # the nodes' group and its 7 rules, at least
    assert {
        n: ec2_description_problem(d) for n, d in described.items() if ec2_description_problem(d)
    } == {}


def test_the_rule_refuses_what_ec2_refuses():
    said = "The endpoints' internal load balancer: HTTP from the VPC only"  # as it once was
    assert '"\'"' in (ec2_description_problem(said) or "")
    assert "at most 255" in (ec2_description_problem("x" * 256) or "")
    assert ec2_description_problem("a-z A-Z 0-9 ._-:/()#,@[]+=&;{}!$*") is None
