"""hyperpod-dpd-sns-topics: every SNS topic (the SLO alerts', specs/slo/alerting.py) is encrypted with
a KMS key, and no topic or key policy allows everyone: a statement whose principal is "*" needs a
condition (aws:SourceAccount, aws:SourceArn) that narrows it. A public topic lets anyone read the
alerts (endpoint names, error rates) or publish false ones."""

from __future__ import annotations

import json
from typing import Any

from policies.rules import views
from policies.rules.base import Finding, Rule

TOPIC = "aws:sns/topic:Topic"
TOPIC_POLICY = "aws:sns/topicPolicy:TopicPolicy"
KEY = "aws:kms/key:Key"


def _public(principal: Any) -> bool:
    if principal == "*":
        return True
    if isinstance(principal, dict):
        aws = principal.get("AWS")
        return aws == "*" or (isinstance(aws, list) and "*" in aws)
    return False


def _open_statements(policy_text: Any) -> list[str]:
    """The Sids (or indexes) of statements allowing anyone, unconditionally."""
    try:
        statements = json.loads(policy_text).get("Statement", [])
    except (TypeError, ValueError, AttributeError):
        return []
    if isinstance(statements, dict):
        statements = [statements]
    return [
        str(s.get("Sid", i))
        for i, s in enumerate(statements)
        if s.get("Effect") == "Allow" and _public(s.get("Principal")) and not s.get("Condition")
    ]


def check(resources, limits):
    for topic in views.of_type(resources, TOPIC):
        if not topic.props.get("kmsMasterKeyId"):
            yield Finding(topic.urn, f"SNS topic {topic.name} is not encrypted (kmsMasterKeyId)")
    for kind, what in ((TOPIC_POLICY, "topic policy"), (KEY, "key policy")):
        for r in views.of_type(resources, kind):
            policy = r.props.get("policy")
            if views.unknown(policy):
                yield views.unchecked(r.urn, f"the {what} of {r.name}")
                continue
            for sid in _open_statements(policy):
                yield Finding(
                    r.urn,
                    f'{what} of {r.name} allows everyone (statement {sid}: Principal "*" and '
                    "no condition)",
                )


RULE = Rule(
    "hyperpod-dpd-sns-topics",
    "SNS topics encrypted; no topic or key policy open to everyone",
    "mandatory",
    check,
)
