"""hyperpod-dpd-boot-scripts (policies/rules/security/boot_scripts.py): the bucket of the nodes'
lifecycle scripts must deny object writes and deletes to all but the principals it names."""

from __future__ import annotations

import json

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
