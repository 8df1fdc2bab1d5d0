"""The HyperPod cluster as the engine sees it: one AZ, EFA, health checks, labels, taints."""

from __future__ import annotations

import json

import pytest

from tests.conftest import edit, run_stack, stack_raw

CLUSTER = "aws-native:sagemaker:Cluster"


@pytest.fixture(scope="module")
def dev():
    return run_stack(stack_raw("dev"))


@pytest.fixture(scope="module")
def prod():
    return run_stack(stack_raw("prod"), stack="prod")


def groups(run) -> dict[str, dict]:
    (cluster,) = run.of_type(CLUSTER)
    return {g["instanceGroupName"]: g for g in cluster.inputs["instanceGroups"]}


def test_one_instance_group_per_config_entry(dev):
    assert sorted(groups(dev)) == ["decode", "prefill", "system"]
    assert groups(dev)["prefill"]["instanceType"] == "ml.p5.48xlarge"
    assert groups(dev)["system"]["instanceCount"] == 1


def test_all_gpu_groups_share_the_one_gpu_subnet_in_the_configured_az(dev):
    gpu = [g for g in groups(dev).values() if g["instanceGroupName"] != "system"]
    subnet_ids = {tuple(g["overrideVpcConfig"]["subnets"]) for g in gpu}
    assert len(subnet_ids) == 1
    (ids,) = subnet_ids
    (subnet_id,) = ids
    subnet = dev.by_id(subnet_id)
    assert subnet.inputs["availabilityZoneId"] == "use2-az2"
    assert subnet.inputs["tags"]["hyperpod-dpd:tier"] == "gpu"


def test_efa_interface_and_deep_health_checks_on_every_gpu_group(dev):
    for name in ("prefill", "decode"):
        g = groups(dev)[name]
        assert g["networkInterface"] == {"interfaceType": "efa"}
        assert g["onStartDeepHealthChecks"] == ["InstanceStress", "InstanceConnectivity"]
    assert "networkInterface" not in groups(dev)["system"]


def test_labels_and_gpu_taint_per_role(dev):
    for name, g in groups(dev).items():
        labels = g["kubernetesConfig"]["labels"]
        assert labels["hyperpod-dpd/role"] == name  # dev's groups are named after their roles
        assert labels["hyperpod-dpd/instance-group"] == name
    gpu_taint = [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]
    assert groups(dev)["prefill"]["kubernetesConfig"]["taints"] == gpu_taint
    assert groups(dev)["decode"]["kubernetesConfig"]["taints"] == gpu_taint
    assert groups(dev)["system"]["kubernetesConfig"].get("taints", []) == []


def test_cluster_settings(dev):
    (cluster,) = dev.of_type(CLUSTER)
    i = cluster.inputs
    assert i["clusterName"] == "hyperpod-dpd-dev"
    assert i["nodeRecovery"] == "Automatic"
    assert i["nodeProvisioningMode"] == "Continuous"
    (eks,) = dev.of_type("aws:eks/cluster:Cluster")
    arn = f"arn:aws:eks:us-east-2:123456789012:cluster/{eks.id}"
    assert i["orchestrator"] == {"eks": {"clusterArn": arn}}


def test_training_plan_is_passed_through():
    arn = "arn:aws:sagemaker:us-east-2:111122223333:training-plan/p5-dev"
    raw = edit(stack_raw("dev"), "hyperpod-dpd:instanceGroups.decode.trainingPlanArn", arn)
    assert groups(run_stack(raw))["decode"]["trainingPlanArn"] == arn


def test_dependencies_release_precedes_the_cluster(dev):
    (release,) = dev.of_type("kubernetes:helm.sh/v3:Release")
    (cluster,) = dev.of_type(CLUSTER)
    assert release.urn in cluster.depends_on
    assert release.inputs["skipAwait"] is True  # no nodes exist before the cluster
    assert release.inputs["namespace"] == "kube-system"
    assert "067d658b2d5c3d347afbadd75e1425214e965dcb" in release.inputs["chart"]
    tolerations = release.inputs["values"]["aws-efa-k8s-device-plugin"]["tolerations"]
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in tolerations


def test_coredns_waits_for_the_cluster_nodes(dev):
    (cluster,) = dev.of_type(CLUSTER)
    addons = {r.inputs["addonName"]: r for r in dev.of_type("aws:eks/addon:Addon")}
    assert cluster.urn in addons["coredns"].depends_on
    for early in ("vpc-cni", "kube-proxy", "eks-pod-identity-agent"):
        assert cluster.urn not in addons[early].depends_on


def _statements(run, name):
    return json.loads(run.named(name).inputs["policy"])["Statement"]


def test_execution_role_s3_access_is_scoped_to_bucket_arns(dev):
    statements = [s for s in _statements(dev, "hyperpod-execution-s3") if s["Effect"] == "Allow"]
    resources = [res for s in statements for res in s["Resource"]]
    assert all(res.startswith("arn:aws:s3:::") for res in resources)
    assert not any(res in ("*", "arn:aws:s3:::*") for res in resources)
    lifecycle = dev.named("lifecycle-scripts-bucket").id
    models = dev.named("models-bucket").id
    prefix = "models/meta-llama/Llama-3.3-70B-Instruct/6f6073b423013f6a7d4d9f39144961bfbfbc386b"
    assert f"arn:aws:s3:::{lifecycle}/*" in resources
    assert f"arn:aws:s3:::{models}/{prefix}/*" in resources
    assert f"arn:aws:s3:::{models}/*" not in resources  # only the model's prefix
    actions = {a for s in statements for a in s["Action"]}
    assert actions == {"s3:GetObject", "s3:ListBucket"}


def test_execution_role_trusts_sagemaker_and_has_the_managed_policies(dev):
    role = dev.named("hyperpod-execution-role")
    trust = json.loads(role.inputs["assumeRolePolicy"])["Statement"][0]
    assert trust["Principal"] == {"Service": ["sagemaker.amazonaws.com"]}
    attached = {
        r.inputs["policyArn"]
        for r in dev.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
        if r.name.startswith("hyperpod-execution-")
    }
    assert attached == {
        "arn:aws:iam::aws:policy/AmazonSageMakerClusterInstanceRolePolicy",
        "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
        "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly",
    }


def test_lifecycle_script_is_uploaded_and_referenced(dev):
    (script,) = dev.of_type("aws:s3/bucketObjectv2:BucketObjectv2")
    assert script.inputs["key"] == "lifecycle/on_create.sh"
    assert script.inputs["source"]["path"].endswith("infra/lifecycle_scripts/on_create.sh")
    bucket = dev.named("lifecycle-scripts-bucket").id
    assert bucket.startswith("sagemaker-")  # what AmazonSageMakerClusterInstanceRolePolicy reads
    for g in groups(dev).values():
        assert g["lifeCycleConfig"] == {
            "sourceS3Uri": f"s3://{bucket}/lifecycle/",
            "onCreate": "on_create.sh",
        }


def test_hyperpod_uses_an_aws_native_provider_in_the_stacks_region(dev):
    (provider,) = dev.of_type("pulumi:providers:aws-native")
    assert provider.inputs["region"] == "us-east-2"
    (cluster,) = dev.of_type(CLUSTER)
    assert cluster.provider.startswith(provider.urn)


def test_gpu_groups_are_in_service_only_with_every_node(prod):
    (cluster,) = prod.of_type("aws-native:sagemaker:Cluster")
    groups = {g["instanceGroupName"]: g for g in cluster.inputs["instanceGroups"]}
    assert groups["prefill"]["minInstanceCount"] == groups["prefill"]["instanceCount"] == 2
    assert groups["decode"]["minInstanceCount"] == 2
    assert "minInstanceCount" not in groups["system"]
    # No automatic patching and no AMI release unless the stack names one.
    assert all(
        "autoPatchConfig" not in g and "imageReleaseVersion" not in g for g in groups.values()
    )


def test_ami_release_and_patching_are_set_per_group_when_asked():
    raw = edit(stack_raw("dev"), "hyperpod-dpd:instanceGroups.decode.imageReleaseVersion", "1.2.3")
    edit(raw, "hyperpod-dpd:instanceGroups.system.autoPatch", "WhenIdle")
    (cluster,) = run_stack(raw).of_type("aws-native:sagemaker:Cluster")
    groups = {g["instanceGroupName"]: g for g in cluster.inputs["instanceGroups"]}
    assert groups["decode"]["imageReleaseVersion"] == "1.2.3"
    assert groups["system"]["autoPatchConfig"] == {"patchingStrategy": "WhenIdle"}
