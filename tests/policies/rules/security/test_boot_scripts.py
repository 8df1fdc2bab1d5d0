"""hyperpod-dpd-boot-scripts (policies/rules/security/boot_scripts.py): the bucket of the nodes'
lifecycle scripts must deny object writes and deletes to all but the principals it names."""

from __future__ import annotations

import json

import pytest

from tests.policies.conftest import named
from tests.policies.rules.helpers import CLUSTER_URN, findings

RULE = "hyperpod-dpd-boot-scripts"


def _policy(views) -> dict:
    return json.loads(named(views, "lifecycle-scripts-tls-only").props["policy"])


def _set(views, document: dict) -> None:
    named(views, "lifecycle-scripts-tls-only").props["policy"] = json.dumps(document)


def test_the_stacks_bucket_policy_passes(dev):
    assert findings(RULE, dev) == []


def test_a_tls_only_policy_alone_is_refused(dev):
    """What the stack shipped before: any principal allowed s3:PutObject could replace them."""
    doc = _policy(dev)
    doc["Statement"] = doc["Statement"][:1]
    _set(dev, doc)
    bucket = named(dev, "lifecycle-scripts-bucket").props["bucket"]
    ((urn, message),) = findings(RULE, dev)
    assert urn == CLUSTER_URN
    assert message.startswith(f"the lifecycle scripts' bucket {bucket} lets any principal")
    assert "hyperpod-dpd:deployerArns" in message


def test_a_deny_that_spares_deletes_or_hinges_on_more_than_the_principal_is_refused(dev):
    doc = _policy(dev)
    deny = doc["Statement"][1]
    deny["Action"] = ["s3:PutObject"]  # deletes left open
    _set(dev, doc)
    assert len(findings(RULE, dev)) == 1
    deny["Action"] = ["s3:*"]
    deny["Condition"]["Bool"] = {"aws:SecureTransport": "false"}  # only over plain HTTP
    _set(dev, doc)
    assert len(findings(RULE, dev)) == 1
    del deny["Condition"]["Bool"]
    _set(dev, doc)
    assert findings(RULE, dev) == []


def _exemption(views, condition: dict) -> list:
    doc = _policy(views)
    doc["Statement"][1]["Condition"] = condition
    _set(views, doc)
    return findings(RULE, views)


ADMIN = "arn:aws:iam::111122223333:role/PlatformAdmin"


@pytest.mark.parametrize(
    "condition",
    [
        # A pattern under a Like operator: every principal of every account is exempt.
        {"ArnNotLike": {"aws:PrincipalArn": "arn:aws:iam::*:*"}},
        {"StringNotLike": {"aws:PrincipalArn": ["arn:aws:iam::111122223333:role/*"]}},
        {"ArnNotLike": {"aws:PrincipalArn": [ADMIN, "arn:aws:iam::111122223333:role/?dmin"]}},
        # ...IfExists: true where the key is absent; the set operators judge sets.
        {"StringNotEqualsIfExists": {"aws:PrincipalArn": ADMIN}},
        {"ArnNotEqualsIfExists": {"aws:PrincipalArn": ADMIN}},
        {"ForAllValues:StringNotEquals": {"aws:PrincipalArn": [ADMIN]}},
        # Not a role or user (a session's ARN is never aws:PrincipalArn), or no one at all.
        {"ArnNotEquals": {"aws:PrincipalArn": "arn:aws:sts::111122223333:assumed-role/A/s"}},
        {"ArnNotEquals": {"aws:PrincipalArn": []}},
        # Some other operator that merely contains "Not".
        {"NotIpAddress": {"aws:PrincipalArn": ADMIN}},
    ],
)
def test_an_exemption_that_does_not_name_principals_is_refused(dev, condition):
    assert len(_exemption(dev, condition)) == 1, condition


def test_an_exemption_of_named_roles_and_users_passes(dev):
    user = "arn:aws:iam::111122223333:user/ops/alice"
    sso = (
        "arn:aws:iam::111122223333:role/aws-reserved/sso.amazonaws.com/eu-west-1/"
        "AWSReservedSSO_Admin_0123456789abcdef"
    )
    condition = {
        "ArnNotEquals": {"aws:PrincipalArn": [ADMIN, user]},
        "StringNotLike": {"aws:PrincipalArn": sso},
    }
    assert _exemption(dev, condition) == []
