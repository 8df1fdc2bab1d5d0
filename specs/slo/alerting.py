"""Where the SLO alerts go: the rule file (specs/slo/rules.py) as a rule groups namespace of the
stack's Amazon Managed Prometheus workspace, whose alert manager sends every alert to one SNS
topic (the stack output alertsTopicArn), with the subscriptions of
hyperpod-dpd:observability.alertSubscriptions.

The topic is encrypted with a key of its own: AMP publishes to an encrypted topic only when the
key's policy lets aps.amazonaws.com use it, which an AWS-managed key's policy never does ("Give
Amazon Managed Service for Prometheus permission to send alert messages to your Amazon SNS
topic", docs.aws.amazon.com/prometheus/latest/userguide/AMP-alertmanager-receiver-AMPpermission.html).
The topic policy lets AMP publish for this account's workspace only (aws:SourceAccount,
aws:SourceArn: the confused-deputy guard of the same page); nobody else may publish. The key's
statement for AMP carries the same two conditions.
The alert manager's SNS receiver signs with SigV4 in the stack's Region ("Alert manager
configuration", AMP-alertmanager-config.html: sns_configs with sigv4).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import yaml

from core.refs import ref
from core.vocabulary import OBSERVABILITY
from settings.stack import StackSettings
from specs.base import Desired
from specs.slo.rules import rule_file_text

KEY_TYPE = "aws:kms/key:Key"
TOPIC_TYPE = "aws:sns/topic:Topic"
TOPIC_POLICY_TYPE = "aws:sns/topicPolicy:TopicPolicy"
SUBSCRIPTION_TYPE = "aws:sns/topicSubscription:TopicSubscription"
RULES_TYPE = "aws:amp/ruleGroupNamespace:RuleGroupNamespace"
ALERT_MANAGER_TYPE = "aws:amp/alertManagerDefinition:AlertManagerDefinition"
AMP = "aps.amazonaws.com"
# How alerts are batched into messages: one per endpoint, role and alert.
GROUP_BY = ["alertname", "endpoint", "role"]


@dataclass(frozen=True)
class AlertingSpec:
    key: Desired
    topic: Desired
    topic_policy: Desired
    subscriptions: tuple[Desired, ...]
    rules: Desired
    alert_manager: Desired

    def resources(self) -> list[Desired]:
        return [
            self.key,
            self.topic,
            self.topic_policy,
            *self.subscriptions,
            self.rules,
            self.alert_manager,
        ]


def _doc(*statements: dict) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def alerting(
    name: str, s: StackSettings, stack: str, account_id: str, partition: str, tags: dict[str, str]
) -> AlertingSpec | None:
    """The alerting of `stack` (None: no SLO, or no workspace). `account_id` is a placeholder."""
    rules = rule_file_text(s, stack)
    if rules is None or not s.observability.enabled:
        return None
    parents = (OBSERVABILITY,)
    workspace_arn, workspace_id = ref(f"{name}-amp", "arn"), ref(f"{name}-amp", "id")
    from_workspace = {
        "StringEquals": {"aws:SourceAccount": account_id},
        "ArnEquals": {"aws:SourceArn": workspace_arn},
    }
    key = Desired(KEY_TYPE, f"{name}-alerts-key", parents, {
        "description": "Encrypts the SLO alerts topic (AMP's alert manager publishes to it)",
        "enableKeyRotation": True,
        "deletionWindowInDays": 30,
        "policy": _doc(
            {"Sid": "AccountAdministers", "Effect": "Allow",
             "Principal": {"AWS": f"arn:{partition}:iam::{account_id}:root"},
             "Action": "kms:*", "Resource": "*"},
            # The AMP page above grants AMP these two actions; SNS's page for AWS services
            # publishing to encrypted topics scopes such a statement to the publishing resource
            # with aws:SourceArn ("Configure AWS KMS permissions for AWS services",
            # https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html; as GameLift's
            # topic setup writes it, https://docs.aws.amazon.com/gamelift/latest/flexmatchguide/queue-notification-sns-sse.html):
            # this account's workspace only, as the topic policy.
            {"Sid": "AmpEncryptsAlerts", "Effect": "Allow", "Principal": {"Service": AMP},
             "Action": ["kms:GenerateDataKey*", "kms:Decrypt"], "Resource": "*",
             "Condition": from_workspace},
        ),
        "tags": tags,
    })  # fmt: skip
    topic = Desired(TOPIC_TYPE, f"{name}-alerts", parents, {
        "kmsMasterKeyId": ref(key.name, "arn"),
        "tags": tags,
    })  # fmt: skip
    topic_arn = ref(topic.name, "arn")
    policy = Desired(TOPIC_POLICY_TYPE, f"{name}-alerts-policy", parents, {
        "arn": topic_arn,
        "policy": _doc(
            {"Sid": "AmpPublishesAlerts", "Effect": "Allow", "Principal": {"Service": AMP},
             "Action": ["sns:Publish", "sns:GetTopicAttributes"], "Resource": topic_arn,
             "Condition": from_workspace},
        ),
    })  # fmt: skip
    subscriptions = tuple(
        Desired(
            SUBSCRIPTION_TYPE,
            f"{name}-alerts-{i}",
            parents,
            {
                "topic": topic_arn,
                "protocol": "https" if target.startswith("https://") else "email",
                "endpoint": target,
            },
        )
        for i, target in enumerate(s.observability.alert_subscriptions)
    )
    rule_groups = Desired(RULES_TYPE, f"{name}-rules", parents, {
        "workspaceId": workspace_id,
        "name": "hyperpod-dpd-slo",
        "data": rules,
        "tags": tags,
    })  # fmt: skip
    config = {
        "route": {"receiver": "sns", "group_by": GROUP_BY},
        "receivers": [{
            "name": "sns",
            "sns_configs": [{
                "topic_arn": topic_arn,
                "sigv4": {"region": s.region},
                "subject": "[{{ .CommonLabels.severity }}] {{ .CommonLabels.alertname }} "
                "{{ .CommonLabels.endpoint }}/{{ .CommonLabels.role }}",
                "attributes": {"severity": "{{ .CommonLabels.severity }}"},
            }],
        }],
    }  # fmt: skip
    manager = Desired(ALERT_MANAGER_TYPE, f"{name}-alertmanager", parents, {
        "workspaceId": workspace_id,
        "definition": yaml.safe_dump(
            {"alertmanager_config": yaml.safe_dump(config, sort_keys=False, width=1000)},
            sort_keys=False, width=1000,
        ),
    })  # fmt: skip
    return AlertingSpec(key, topic, policy, subscriptions, rule_groups, manager)
