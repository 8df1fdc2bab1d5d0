"""AMP, AMG and the HyperPod observability add-on; all gone with observability.enabled false."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.conftest import canary_raw, edit, run_stack, stack_raw


@pytest.fixture(scope="module")
def dev():
    return run_stack(stack_raw("dev"))


def test_addon_pod_identity_and_configuration(dev):
    (addon,) = [
        r
        for r in dev.of_type("aws:eks/addon:Addon")
        if r.inputs["addonName"] == "amazon-sagemaker-hyperpod-observability"
    ]
    (association,) = addon.inputs["podIdentityAssociations"]
    assert association["serviceAccount"] == "hyperpod-observability-operator-otel-collector"
    config = json.loads(addon.inputs["configurationValues"])
    (amp,) = dev.of_type("aws:amp/workspace:Workspace")
    assert config["ampWorkspace"]["arn"] == f"arn:aws:aps:us-east-2:123456789012:workspace/{amp.id}"
    assert config["ampWorkspace"]["prometheusEndpoint"].startswith(
        "https://aps-workspaces.us-east-2"
    )
    assert config["metricsProvider"]["inferenceMetrics"] == {"level": "BASIC", "scrapeInterval": 30}
    assert config["logging"] == {"enabled": True}


def test_collector_role_trusts_pod_identity_of_this_cluster_only(dev):
    (statement,) = json.loads(dev.named("observability-collector-role").inputs["assumeRolePolicy"])[
        "Statement"
    ]
    assert statement["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert statement["Action"] == ["sts:AssumeRole", "sts:TagSession"]
    (eks,) = dev.of_type("aws:eks/cluster:Cluster")
    assert statement["Condition"]["ArnEquals"]["aws:SourceArn"].endswith(f":cluster/{eks.id}")
    assert statement["Condition"]["StringEquals"]["aws:SourceAccount"] == "123456789012"


def test_collector_writes_only_to_its_workspace_and_cluster_logs(dev):
    (amp,) = dev.of_type("aws:amp/workspace:Workspace")
    write, logs, describe = json.loads(
        dev.named("observability-collector-policy").inputs["policy"]
    )["Statement"]
    assert write["Action"] == ["aps:RemoteWrite"]
    assert write["Resource"] == [f"arn:aws:aps:us-east-2:123456789012:workspace/{amp.id}"]
    assert all("/aws/sagemaker/Clusters/" in r for r in logs["Resource"])
    # The one action IAM matches against "*" only: it lists log groups' names, reads no events.
    assert (describe["Action"], describe["Resource"]) == (["logs:DescribeLogGroups"], ["*"])


def test_grafana_uses_identity_center_and_reads_amp_and_cloudwatch(dev):
    (grafana,) = dev.of_type("aws:grafana/workspace:Workspace")
    assert grafana.inputs["authenticationProviders"] == ["AWS_SSO"]
    assert set(grafana.inputs["dataSources"]) == {"PROMETHEUS", "CLOUDWATCH"}
    assert dev.outputs["grafanaUrl"].startswith("https://g-")


def test_addon_waits_for_the_cluster_and_the_pod_identity_agent(dev):
    (addon,) = [
        r
        for r in dev.of_type("aws:eks/addon:Addon")
        if r.inputs["addonName"] == "amazon-sagemaker-hyperpod-observability"
    ]
    (cluster,) = dev.of_type("aws-native:sagemaker:Cluster")
    agent = dev.named("eks-eks-pod-identity-agent")
    assert cluster.urn in addon.depends_on and agent.urn in addon.depends_on


def test_disabled_observability_creates_none_of_it():
    run = run_stack(edit(stack_raw("dev"), "hyperpod-dpd:observability.enabled", False))
    assert not run.of_type("aws:amp/workspace:Workspace")
    assert not run.of_type("aws:grafana/workspace:Workspace")
    assert not run.of_type("hyperpod-dpd:infra:Observability")
    assert "grafanaUrl" not in run.outputs
    keda = json.loads(run.named("inference-operator-keda-policy").inputs["policy"])["Statement"]
    assert keda[1]["Resource"] == ["arn:aws:aps:us-east-2:123456789012:workspace/*"]


def test_the_slo_rules_and_alerts_reach_an_encrypted_topic_only_the_workspace_publishes_to():
    run = run_stack(canary_raw(), stack="canary")
    by_type = {}
    for r in run.resources:
        by_type.setdefault(r.type, []).append(r)
    (rules,) = by_type["aws:amp/ruleGroupNamespace:RuleGroupNamespace"]
    groups = yaml.safe_load(rules.inputs["data"])["groups"]
    assert [g["name"] for g in groups] == ["hyperpod-dpd-baseline", "hyperpod-dpd-candidate"]
    (topic,) = by_type["aws:sns/topic:Topic"]
    assert topic.inputs["kmsMasterKeyId"]  # its own key, which AMP may use
    (policy,) = by_type["aws:sns/topicPolicy:TopicPolicy"]
    (statement,) = json.loads(policy.inputs["policy"])["Statement"]
    assert statement["Principal"] == {"Service": "aps.amazonaws.com"}
    assert set(statement["Condition"]) == {"StringEquals", "ArnEquals"}
    (manager,) = by_type["aws:amp/alertManagerDefinition:AlertManagerDefinition"]
    config = yaml.safe_load(yaml.safe_load(manager.inputs["definition"])["alertmanager_config"])
    (receiver,) = config["receivers"]
    assert receiver["sns_configs"][0]["sigv4"] == {"region": "us-east-2"}
    assert "alertsTopicArn" in run.outputs


def test_no_slo_no_alerting():
    run = run_stack(edit(canary_raw(), "hyperpod-dpd:slo", {}), stack="canary")
    types = {r.type for r in run.resources}
    assert not types & {"aws:sns/topic:Topic", "aws:amp/ruleGroupNamespace:RuleGroupNamespace"}
    assert "alertsTopicArn" not in run.outputs
