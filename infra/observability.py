"""Observability: Amazon Managed Prometheus and Grafana, and the HyperPod observability add-on
that scrapes the inference metrics (TTFT, TPOT, queue depths, KV transfer time) into them.

`observability.enabled: false` creates none of this (the component is not instantiated).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from core.versions import OBSERVABILITY_ADDON_VERSION
from core.vocabulary import OBSERVABILITY, OBSERVABILITY_NAMESPACE, SCRAPE_INTERVAL_SECONDS
from infra.iam import inline_policy, pod_identity_trust, role_with_policies, service_trust
from program.outputs import Outputs
from specs.base import Desired
from specs.iam import managed_policy
from specs.slo.alerting import AlertingSpec

ADDON_NAME = "amazon-sagemaker-hyperpod-observability"
NAMESPACE = OBSERVABILITY_NAMESPACE
SERVICE_ACCOUNT = "hyperpod-observability-operator-otel-collector"
# Metric families of the add-on; inference metrics are what DPD tuning needs.
METRIC_LEVELS = {
    "trainingMetrics": "DISABLED",
    "inferenceMetrics": "BASIC",
    "taskGovernanceMetrics": "DISABLED",
    "scalingMetrics": "BASIC",
    "customMetrics": "DISABLED",
    "nodeMetrics": "BASIC",
    "acceleratedComputeMetrics": "BASIC",
    "networkMetrics": "BASIC",
}


@dataclass(frozen=True)
class ObservabilityArgs:
    collector_policy: Desired  # specs/observability.py
    outputs: Outputs  # publishes the AMP workspace's ARN
    cluster_name: pulumi.Input[str]
    eks_cluster_arn: pulumi.Input[str]
    account_id: pulumi.Input[str]
    region: str
    stack: str
    partition: str = "aws"
    tags: dict[str, str] = field(default_factory=dict)
    alerting: AlertingSpec | None = None  # an SLO set: rules, alert manager, SNS topic
    # The HyperPod cluster (the collector runs on its nodes) and the pod identity agent add-on.
    depends_on: list[pulumi.Resource] = field(default_factory=list)


class Observability(pulumi.ComponentResource):
    prometheus: aws.amp.Workspace
    grafana: aws.grafana.Workspace

    def __init__(
        self, name: str, args: ObservabilityArgs, opts: pulumi.ResourceOptions | None = None
    ):
        super().__init__(OBSERVABILITY, name, None, opts)
        self._name, self._args = name, args
        child = pulumi.ResourceOptions(parent=self)
        self.prometheus = aws.amp.Workspace(
            f"{name}-amp", alias=f"hyperpod-dpd-{args.stack}", tags=args.tags, opts=child
        )
        args.outputs.publish(f"{name}-amp", arn=self.prometheus.arn, id=self.prometheus.id)
        self.grafana = self._create_grafana()
        collector = self._create_collector_role()
        self.addon = aws.eks.Addon(
            f"{name}-addon",
            cluster_name=args.cluster_name,
            addon_name=ADDON_NAME,
            addon_version=OBSERVABILITY_ADDON_VERSION,
            configuration_values=addon_configuration(
                self.prometheus.prometheus_endpoint,
                self.prometheus.arn,
                self.grafana.name,
                self.grafana.arn,
            ),
            pod_identity_associations=[
                {"role_arn": collector.arn, "service_account": SERVICE_ACCOUNT}
            ],
            resolve_conflicts_on_create="OVERWRITE",
            resolve_conflicts_on_update="PRESERVE",
            tags=args.tags,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[*args.depends_on, *self._grants]),
        )
        self.alerts_topic = self._create_alerting()
        self.grafana_url = pulumi.Output.concat("https://", self.grafana.endpoint)
        self.prometheus_endpoint = self.prometheus.prometheus_endpoint
        self.register_outputs(
            {"grafanaUrl": self.grafana_url, "prometheusEndpoint": self.prometheus_endpoint}
        )

    def _create_alerting(self) -> aws.sns.Topic | None:
        """The SLO rules in the workspace, its alert manager, and the topic it sends to."""
        spec, out = self._args.alerting, self._args.outputs
        if spec is None:
            return None
        child = pulumi.ResourceOptions(parent=self)
        key = aws.kms.Key(spec.key.name, **out.resolve(spec.key.kwargs()), opts=child)
        out.publish(spec.key.name, arn=key.arn)
        topic = aws.sns.Topic(spec.topic.name, **out.resolve(spec.topic.kwargs()), opts=child)
        out.publish(spec.topic.name, arn=topic.arn)
        policy = aws.sns.TopicPolicy(
            spec.topic_policy.name, **out.resolve(spec.topic_policy.kwargs()), opts=child
        )
        for sub in spec.subscriptions:
            aws.sns.TopicSubscription(sub.name, **out.resolve(sub.kwargs()), opts=child)
        rules = aws.amp.RuleGroupNamespace(
            spec.rules.name, **out.resolve(spec.rules.kwargs()), opts=child
        )
        # Alerts start flowing once AMP may publish (the topic policy) to an existing topic.
        aws.amp.AlertManagerDefinition(
            spec.alert_manager.name,
            **out.resolve(spec.alert_manager.kwargs()),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[policy, rules]),
        )
        return topic

    def _create_grafana(self) -> aws.grafana.Workspace:
        a = self._args
        grafana = role_with_policies(
            f"{self._name}-grafana-role",
            # Only for this account's Grafana workspaces (Amazon Managed Grafana's trust policy
            # for customer-managed roles: aws:SourceAccount and aws:SourceArn,
            # https://docs.aws.amazon.com/grafana/latest/userguide/AMG-manage-permissions.html).
            service_trust(
                "grafana.amazonaws.com",
                source_account=a.account_id,
                source_arn=pulumi.Output.concat(
                    f"arn:{a.partition}:grafana:{a.region}:", a.account_id, ":/workspaces/*"
                ),
            ),
            {
                f"{self._name}-grafana-{policy.lower()}": managed_policy(a.partition, policy)
                # Read AMP (the DPD dashboards) and CloudWatch (HyperPod cluster logs, metrics).
                for policy in ("AmazonPrometheusQueryAccess", "CloudWatchReadOnlyAccess")
            },
            parent=self,
            tags=a.tags,
        )
        role, self._grants = grafana.role, list(grafana.grants)
        return aws.grafana.Workspace(
            f"{self._name}-grafana",
            name=f"hyperpod-dpd-{a.stack}",
            account_access_type="CURRENT_ACCOUNT",
            authentication_providers=["AWS_SSO"],  # IAM Identity Center users sign in
            permission_type="SERVICE_MANAGED",
            data_sources=["PROMETHEUS", "CLOUDWATCH"],
            role_arn=role.arn,
            tags=a.tags,
            opts=pulumi.ResourceOptions(parent=self, depends_on=self._grants),
        )

    def _create_collector_role(self) -> aws.iam.Role:
        a = self._args
        role = aws.iam.Role(
            f"{self._name}-collector-role",
            assume_role_policy=pod_identity_trust(a.eks_cluster_arn, a.account_id),
            tags=a.tags,
            opts=pulumi.ResourceOptions(parent=self),
        )
        a.outputs.publish(f"{self._name}-collector-role", id=role.id)
        self._grants.append(inline_policy(a.collector_policy, a.outputs, self))
        return role


def addon_configuration(
    prometheus_endpoint: pulumi.Input[str],
    prometheus_arn: pulumi.Input[str],
    grafana_name: pulumi.Input[str],
    grafana_arn: pulumi.Input[str],
) -> pulumi.Output[str]:
    """The add-on's configuration values (keys as the awsome-distributed-training module and the
    HyperPod CLI write them; no published schema was found)."""
    return pulumi.Output.json_dumps(
        {
            "ampWorkspace": {"prometheusEndpoint": prometheus_endpoint, "arn": prometheus_arn},
            "amgWorkspace": {"workspaceName": grafana_name, "arn": grafana_arn},
            "logging": {"enabled": True},
            "metricsProvider": {
                family: {"level": level, "scrapeInterval": SCRAPE_INTERVAL_SECONDS}
                for family, level in METRIC_LEVELS.items()
            },
        }
    )
