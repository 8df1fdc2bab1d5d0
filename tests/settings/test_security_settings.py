"""The security settings: the split's listener (trafficListener), the VPC's flow
logs (network.flowLogs, flowLogRetentionDays) and the locked rules no policy override lowers,
each refused value named by its full key."""

from __future__ import annotations

import json

import pytest

from settings import parse_settings
from tests.conftest import canary_raw, edit, stack_raw
from tests.settings.problems import followed, only_problem, problems_of

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


# --- The name clients call (domainName, hostedZoneId) and the API keys (apiKeyNames) -----------

LISTENER = f"{NS}:trafficListener"
DOMAIN, ZONE = "llm.internal.example.com", "Z0123456789ABCDEFGHIJ"


def _without(raw, *keys):
    for key in keys:
        raw[LISTENER].pop(key)
    return raw


def test_a_certificate_needs_the_name_it_covers_and_the_fix_gives_one():
    raw = _without(canary_raw(), "domainName", "hostedZoneId")
    message = only_problem(raw)
    assert message.startswith(f"{LISTENER}.domainName: not set; allowed: the name your clients")
    assert "internal-...elb.amazonaws.com" in message
    fixed = parse_settings(followed(raw, message)).traffic_listener
    assert (fixed.domain_name, fixed.hosted_zone_id) == (DOMAIN, ZONE)


def test_a_name_without_a_certificate_is_refused_naming_both_keys():
    raw = _without(canary_raw(), "certificateArn")
    message = only_problem(raw)
    assert message.startswith(f"{LISTENER}.domainName: got '{DOMAIN}'; allowed: a name with ")
    assert f"{LISTENER}.certificateArn" in message


@pytest.mark.parametrize(("gone", "named"), [("hostedZoneId", "hostedZoneId"),
                                             ("domainName", "hostedZoneId")])  # fmt: skip
def test_a_name_and_its_zone_come_together(gone, named):
    raw = _without(edit(canary_raw(), f"{LISTENER}.certificateArn", CERT), gone)
    problems = problems_of(raw)
    assert any(p.startswith(f"{LISTENER}.{named}") for p in problems), problems


@pytest.mark.parametrize(
    ("name", "repaired"),
    [("LLM.Internal.Example.com", DOMAIN), (DOMAIN + ".", DOMAIN), ("*.internal.example.com", None),
     ("llm", None), ("llm_1.example.com", "llm-1-example-com"), ("a" * 64 + ".example.com", None)],
)  # fmt: skip
def test_a_domain_name_is_a_lowercase_dns_name(name, repaired):
    raw = edit(canary_raw(), f"{LISTENER}.domainName", name)
    message = only_problem(raw)
    assert message.startswith(f"{LISTENER}.domainName: got ")
    if repaired == DOMAIN:  # capitals and a trailing dot: the fix writes the name without them
        assert parse_settings(followed(raw, message)).traffic_listener.domain_name == DOMAIN


def test_a_hosted_zone_id_has_route_53s_form():
    message = only_problem(edit(canary_raw(), f"{LISTENER}.hostedZoneId", "internal.example.com"))
    assert message.startswith(f"{LISTENER}.hostedZoneId: got 'internal.example.com'; allowed: a")
    assert "Route 53 hosted zone ID" in message


def test_every_listener_problem_at_once():
    raw = _without(canary_raw(), "domainName", "hostedZoneId")
    edit(raw, f"{LISTENER}.apiKeyNames", ["a", "a"])
    edit(raw, f"{LISTENER}.certificateArn", CERT.replace("us-east-2", "eu-west-1"))
    keys = [p.split(":", 2)[1].split(" ")[0] for p in problems_of(raw)]
    assert sorted(keys) == ["trafficListener.apiKeyNames", "trafficListener.certificateArn",
                            "trafficListener.domainName"]  # fmt: skip


def test_one_generated_key_by_default(dev_raw):
    assert parse_settings(dev_raw).traffic_listener.api_key_names == ["first"]


@pytest.mark.parametrize(("names", "fixed"), [([], ["first"]), (["a", "b", "c", "d"], ["b", "c", "d"]),
                                              (["a", "b", "a"], ["a", "b"])])  # fmt: skip
def test_one_to_three_distinct_key_names(names, fixed):
    raw = edit(canary_raw(), f"{LISTENER}.apiKeyNames", names)
    message = only_problem(raw)
    assert message.startswith(f"{LISTENER}.apiKeyNames: got {json.dumps(names)}")
    assert parse_settings(followed(raw, message)).traffic_listener.api_key_names == fixed


def test_a_key_pasted_where_its_name_belongs_is_refused_and_never_printed():
    key = "k3y" + "0123456789abcdef" * 3
    raw = edit(canary_raw(), f"{LISTENER}.apiKeyNames", [key, "second"])
    message = only_problem(raw)
    assert message.startswith(f"{LISTENER}.apiKeyNames[0]: got '<51 characters, not shown")
    assert key not in message and "never a key" in message
    assert parse_settings(followed(raw, message)).traffic_listener.api_key_names == [
        "first", "second"]  # fmt: skip
