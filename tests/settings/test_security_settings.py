"""The security settings: the split's listener (trafficListener), the VPC's flow
logs (network.flowLogs, flowLogRetentionDays) and the locked rules no policy override lowers,
each refused value named by its full key."""

from __future__ import annotations

import pytest

from settings import parse_settings
from tests.conftest import canary_raw, edit, stack_raw
from tests.settings.problems import followed, only_problem

NS = "hyperpod-dpd"
CERT = "arn:aws:acm:us-east-2:111122223333:certificate/0b7e3c3a-5f1d-4c2e-9a8b-2d6f1e4c7a90"


@pytest.mark.parametrize(
    "arn",
    ["arn:aws:acm:us-east-2:111122223333:certificate/not-a-uuid",
     "arn:aws:iam::111122223333:server-certificate/x", "0b7e3c3a-5f1d-4c2e-9a8b-2d6f1e4c7a90"],
)  # fmt: skip
def test_a_certificate_arn_has_acms_format(arn):
    message = only_problem(edit(canary_raw(), f"{NS}:trafficListener.certificateArn", arn))
    assert message.startswith(f"{NS}:trafficListener.certificateArn: got '{arn}'")


def test_the_certificate_is_in_the_stacks_region():
    other = CERT.replace("us-east-2", "eu-west-1")
    raw = edit(canary_raw(), f"{NS}:trafficListener.certificateArn", other)
    message = only_problem(raw)
    assert "an ACM certificate in aws:region us-east-2" in message
    assert parse_settings(followed(raw, message)).traffic_listener.certificate_arn == CERT


@pytest.mark.parametrize("key,value", [("allowedSecurityGroupIds", ["sg-12"]),
                                        ("allowedCidrs", ["10.9.0.1/16"]),
                                        ("sslPolicy", "ELBSecurityPolicy-2016-08")])  # fmt: skip
def test_listener_values_are_checked(key, value):
    message = only_problem(edit(canary_raw(), f"{NS}:trafficListener.{key}", value))
    assert message.startswith(f"{NS}:trafficListener.{key}")


def test_the_defaults_keep_access_logs_and_let_in_no_cidr(dev_raw):
    listener = parse_settings(dev_raw).traffic_listener
    assert listener.access_logs and listener.access_log_days == 90
    assert listener.allowed_cidrs == [] and listener.certificate_arn is None


def test_flow_log_retention_is_one_cloudwatch_takes(dev_raw):
    raw = edit(dev_raw, f"{NS}:network.flowLogRetentionDays", 100)
    message = only_problem(raw)
    assert message.startswith(f"{NS}:network.flowLogRetentionDays: got 100; allowed: one of ")
    assert parse_settings(followed(raw, message)).network.flow_log_retention_days == 90
    assert parse_settings(stack_raw("dev")).network.flow_logs is True


@pytest.mark.parametrize("level", ["advisory", "disabled"])
def test_the_eks_endpoint_rule_cannot_be_lowered(dev_raw, level):
    edit(dev_raw, f"{NS}:policy", {"enforcement": {"hyperpod-dpd-eks-endpoint": level}})
    message = only_problem(dev_raw)
    assert message.startswith(
        f"hyperpod-dpd:policy.enforcement.hyperpod-dpd-eks-endpoint: got '{level}'; "
        "allowed: mandatory: this rule holds on every stack and cannot be lowered."
    )
    # Followed, the fix plans: the override is gone.
    assert "hyperpod-dpd-eks-endpoint" not in str(followed(dev_raw, message))


def test_a_locked_rule_may_still_be_named_mandatory(dev_raw):
    edit(dev_raw, f"{NS}:policy", {"enforcement": {"hyperpod-dpd-eks-endpoint": "mandatory"}})
    parse_settings(dev_raw)
