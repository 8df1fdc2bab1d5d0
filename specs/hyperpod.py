"""The SageMaker HyperPod cluster as the engine receives it (aws-native: Cloud Control).

One instance group per `hyperpod-dpd:instanceGroups` entry, sorted by name (stable order). GPU
groups (prefill, decode) get the single GPU subnet of `availabilityZoneId`, the EFA interface
and the nodes' security group, deep health checks, a GPU taint and role labels; the system group
runs the operators in the private subnets.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.refs import ref
from core.vocabulary import (
    GPU_RESOURCE,
    GPU_ROLES,
    GROUP_LABEL,
    HYPERPOD_CLUSTER,
    HYPERPOD_CLUSTER_TYPE,
    ROLE_LABEL,
)
from settings.cluster.groups import InstanceGroupConfig
from specs.base import Desired
from specs.iam import Statement, allow, prefix_read, role_policy

DEEP_HEALTH_CHECKS = ["InstanceStress", "InstanceConnectivity"]
# Managed policies the HyperPod EKS docs name for the instance execution role: HyperPod's own,
# plus what an EKS node needs (VPC CNI networking, image pulls from ECR).
EXECUTION_ROLE_POLICIES = (
    "AmazonSageMakerClusterInstanceRolePolicy",
    "AmazonEKS_CNI_Policy",
    "AmazonEC2ContainerRegistryReadOnly",
)


@dataclass(frozen=True)
class HyperPodRefs:
    """Placeholders for what the cluster points at (other components' outputs)."""

    eks_cluster_arn: str
    system_subnet_ids: str  # the private subnets, one list output
    gpu_subnet_id: str
    security_group_id: str
    lifecycle_source_s3_uri: str
    lifecycle_bucket_arn: str
    model_bucket_arn: str


@dataclass(frozen=True)
class HyperPodSpec:
    name: str
    cluster: Desired
    execution_s3: Desired  # the execution role's inline S3 policy


def node_labels(group_name: str, group: InstanceGroupConfig) -> dict[str, str]:
    return {ROLE_LABEL: group.role, GROUP_LABEL: group_name}


def node_taints(group: InstanceGroupConfig) -> list[dict[str, str]]:
    # Key = the extended resource name: EKS's ExtendedResourceToleration admission plugin adds
    # the toleration to every pod that requests nvidia.com/gpu (the endpoint's workers; the
    # IEC has no tolerations field), so other pods stay off the GPU nodes.
    if group.role in GPU_ROLES:
        return [{"key": GPU_RESOURCE, "value": "true", "effect": "NoSchedule"}]
    return []


def instance_group(
    group_name: str,
    group: InstanceGroupConfig,
    refs: HyperPodRefs,
    execution_role_arn: str,
    on_create: str,
) -> dict:
    spec: dict = {
        "instanceGroupName": group_name,
        "instanceType": group.instance_type,
        "instanceCount": group.instance_count,
        "executionRole": execution_role_arn,
        "lifeCycleConfig": {"sourceS3Uri": refs.lifecycle_source_s3_uri, "onCreate": on_create},
        "instanceStorageConfigs": [
            {"ebsVolumeConfig": {"volumeSizeInGb": group.ebs_volume_size_gb}}
        ],
        "kubernetesConfig": {
            "labels": node_labels(group_name, group),
            "taints": node_taints(group),
        },
    }
    if group.role in GPU_ROLES:
        spec.update(
            # InService only with every node: a DPD role with a node missing cannot serve.
            minInstanceCount=group.instance_count,
            # One subnet, in the one GPU AZ, for every GPU group: EFA RDMA needs it.
            overrideVpcConfig={
                "securityGroupIds": [refs.security_group_id],
                "subnets": [refs.gpu_subnet_id],
            },
            networkInterface={"interfaceType": "efa"},
            onStartDeepHealthChecks=DEEP_HEALTH_CHECKS,
        )
    if group.training_plan_arn:
        spec["trainingPlanArn"] = group.training_plan_arn
    if group.image_release_version:
        spec["imageReleaseVersion"] = group.image_release_version
    # No AutoPatchConfig unless asked for: omitted, HyperPod does not patch the group's AMI on
    # its own, so serving nodes change only with an explicit imageReleaseVersion.
    if group.auto_patch:
        spec["autoPatchConfig"] = {"patchingStrategy": group.auto_patch}
    return spec


def hyperpod_cluster(
    name: str,
    cluster_name: str,
    groups: dict[str, InstanceGroupConfig],
    refs: HyperPodRefs,
    on_create: str,
    model_prefixes: tuple[str, ...],
    tags: dict[str, str],
) -> HyperPodSpec:
    role = f"{name}-execution-role"
    cluster = Desired(
        HYPERPOD_CLUSTER_TYPE,
        f"{name}-cluster",
        (HYPERPOD_CLUSTER,),
        {
            "clusterName": cluster_name,
            "orchestrator": {"eks": {"clusterArn": refs.eks_cluster_arn}},
            "nodeRecovery": "Automatic",
            "nodeProvisioningMode": "Continuous",
            "vpcConfig": {
                "securityGroupIds": [refs.security_group_id],
                "subnets": refs.system_subnet_ids,
            },
            "instanceGroups": [
                instance_group(n, g, refs, ref(role, "arn"), on_create)
                for n, g in sorted(groups.items())
            ],
            "tags": [{"key": k, "value": v} for k, v in sorted(tags.items())],
        },
    )
    grants = [
        allow(["s3:ListBucket"], [refs.lifecycle_bucket_arn], "ListLifecycleScripts"),
        allow(["s3:GetObject"], [f"{refs.lifecycle_bucket_arn}/*"], "ReadLifecycleScripts"),
        *prefix_read(refs.model_bucket_arn, model_prefixes),
    ]
    execution_s3 = role_policy(
        f"{name}-execution-s3",
        (HYPERPOD_CLUSTER,),
        ref(role, "id"),
        *grants,
        no_other_reads(grants),
    )
    return HyperPodSpec(name, cluster, execution_s3)


def no_other_reads(grants: list[Statement]) -> Statement:
    """A Deny of every object of the account the execution role is not granted by `grants`.

    AmazonSageMakerClusterInstanceRolePolicy, which HyperPod's docs attach to this role, lets it
    read every object of every `sagemaker-*` bucket of its account (its statement
    DataRetrievalFromS3BucketPermissions: s3:GetObject on arn:aws:s3:::sagemaker-* where
    aws:ResourceAccount is the principal's,
    https://docs.aws.amazon.com/aws-managed-policy/latest/reference/AmazonSageMakerClusterInstanceRolePolicy.html), and AWS-managed SageMaker policies let many
    principals write such buckets (AmazonSageMakerFullAccess: s3:PutObject on *SageMaker*
    buckets, the SDK's default bucket `sagemaker-<region>-<account>` among them). Whoever also
    may call sagemaker:UpdateCluster could point an instance group's LifeCycleConfig at a script
    of theirs there; the next node HyperPod creates or recovers would run it as root, and the
    lifecycle bucket's own policy (specs/lifecycle.py) never comes into play. With this Deny the
    node reads no object of the account but the stack's: the lifecycle scripts and the staged
    weights the inline grants name, so such a node fails its lifecycle script instead.

    What that policy's S3 grant is for: "list and retrieve lifecycle script files from an Amazon
    S3 bucket in your account" (AWS managed policies for SageMaker HyperPod,
    https://docs.aws.amazon.com/sagemaker/latest/dg/security-iam-awsmanpol-cluster.html), and
    AWS's own HyperPod execution role template grants the lifecycle bucket alone
    (aws/sagemaker-hyperpod-cluster-setup eks/cloudformation/sagemaker-iam-role-template.yaml at
    225929764f92: the lifecycle bucket, and a restricted instance group's bucket this stack has
    none of). Objects of other accounts (AWS's own artifacts) are not this Deny's: the condition
    names the role's own account, as the managed policy's grant does.

    What it leaves to detection (hyperpod_dpd/shared/lifecycle_config.py, in preflight and
    verify): an UpdateCluster that also gives a group another execution role (one without this
    Deny), or points it at the staged weights' prefix (its writers: the staging Job, the
    deployers); both show in DescribeCluster.
    """
    readable = [
        r
        for g in grants
        if g["Effect"] == "Allow" and "s3:GetObject" in g["Action"]
        for r in g["Resource"]
    ]
    return {
        "Sid": "ReadNoOtherObjectsOfTheAccount",
        "Effect": "Deny",
        "Action": ["s3:GetObject"],
        "NotResource": readable,
        "Condition": {"StringEquals": {"aws:ResourceAccount": "${aws:PrincipalAccount}"}},
    }
