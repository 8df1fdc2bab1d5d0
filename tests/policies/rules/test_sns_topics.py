"""hyperpod-dpd-sns-topics (policies/rules/sns_topics.py): the canary stack's alerts topic is
encrypted and only its workspace may publish; an unencrypted topic or a policy open to everyone
is refused."""

from __future__ import annotations

import dataclasses
import json

from tests.policies.conftest import named, recorded
from tests.policies.rules.helpers import findings

RULE = "hyperpod-dpd-sns-topics"


def _replace(views, name, **props):
    old = named(views, name)
    views[views.index(old)] = dataclasses.replace(old, props={**old.props, **props})


def test_the_canary_stack_s_alerts_topic_passes():
    assert findings(RULE, recorded("canary")) == []


def test_an_unencrypted_topic_is_refused():
    views = recorded("canary")
    _replace(views, "observability-alerts", kmsMasterKeyId=None)
    assert [m for _, m in findings(RULE, views)] == [
        "SNS topic observability-alerts is not encrypted (kmsMasterKeyId)"
    ]


def test_a_topic_policy_open_to_everyone_is_refused_a_conditioned_one_is_not():
    views = recorded("canary")
    policy = json.loads(named(views, "observability-alerts-policy").props["policy"])
    (statement,) = policy["Statement"]
    statement["Principal"] = {"AWS": "*"}
    _replace(views, "observability-alerts-policy", policy=json.dumps(policy))
    assert findings(RULE, views) == []  # still narrowed to the workspace by its condition
    del statement["Condition"]
    _replace(views, "observability-alerts-policy", policy=json.dumps(policy))
    assert [m for _, m in findings(RULE, views)] == [
        "topic policy of observability-alerts-policy allows everyone (statement "
        'AmpPublishesAlerts: Principal "*" and no condition)'
    ]
