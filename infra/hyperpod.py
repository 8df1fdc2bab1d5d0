"""The SageMaker HyperPod cluster (aws-native: HyperPod exists only in Cloud Control).

One instance group per `hyperpod-dpd:instanceGroups` entry. GPU groups (prefill, decode) get the
single GPU subnet of `availabilityZoneId`, the EFA interface and security group, deep health
checks, a GPU taint and role labels; the system group runs the operators in the private subnets.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws
import pulumi_aws_native as aws_native

from core.vocabulary import GROUP_LABEL, ROLE_LABEL
from core.vocabulary import HYPERPOD_CLUSTER_TYPE as CLUSTER_TYPE
from infra.dependencies import GPU_TAINT_KEY
from infra.iam import allow, document, managed_policy, service_trust
from policies.enforce import UNKNOWN, camel_keys, child_urn, enforce, plain
from policies.rules import ResourceView
from settings.model import InstanceGroupConfig

GPU_ROLES = ("prefill", "decode")
DEEP_HEALTH_CHECKS = ["InstanceStress", "InstanceConnectivity"]
# Managed policies the HyperPod EKS docs name for the instance execution role: HyperPod's own,
# plus what an EKS node needs (VPC CNI networking, image pulls from ECR).
EXECUTION_ROLE_POLICIES = (
    "AmazonSageMakerClusterInstanceRolePolicy",
    "AmazonEKS_CNI_Policy",
    "AmazonEC2ContainerRegistryReadOnly",
)


@dataclass(frozen=True)
class HyperPodArgs:
    cluster_name: str
    eks_cluster_arn: pulumi.Input[str]
    groups: dict[str, InstanceGroupConfig]
    system_subnet_ids: pulumi.Input[list[str]]
    gpu_subnet_id: pulumi.Input[str]
    security_group_id: pulumi.Input[str]
    lifecycle_source_s3_uri: pulumi.Input[str]
    lifecycle_on_create: str
    lifecycle_bucket_arn: pulumi.Input[str]
    model_bucket_arn: pulumi.Input[str]
    model_prefix: str
    partition: str = "aws"
    region: str = "us-east-1"
    tags: dict[str, str] = field(default_factory=dict)
    # The HyperPod dependencies release: SageMaker rejects the cluster without it.
    depends_on: list[pulumi.Resource] = field(default_factory=list)


def node_labels(group_name: str, group: InstanceGroupConfig) -> dict[str, str]:
    return {ROLE_LABEL: group.role, GROUP_LABEL: group_name}


def node_taints(group: InstanceGroupConfig) -> list[dict[str, str]]:
    # Key = the extended resource name: EKS's ExtendedResourceToleration admission plugin adds
    # the toleration to every pod that requests nvidia.com/gpu (the endpoint's workers; the
    # IEC has no tolerations field), so other pods stay off the GPU nodes.
    if group.role in GPU_ROLES:
        return [{"key": GPU_TAINT_KEY, "value": "true", "effect": "NoSchedule"}]
    return []


class HyperPodCluster(pulumi.ComponentResource):
    cluster: aws_native.sagemaker.Cluster
    execution_role: aws.iam.Role
    arn: pulumi.Output[str]

    def __init__(self, name: str, args: HyperPodArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("hyperpod-dpd:infra:HyperPodCluster", name, None, opts)
        self._name, self._args = name, args
        # Judge the groups before anything is created; the role's ARN is not known yet.
        self._enforce_policies([self._instance_group(n, g, UNKNOWN) for n, g in self._groups()])
        self.execution_role = self._create_execution_role()
        groups = [self._instance_group(n, g, self.execution_role.arn) for n, g in self._groups()]
        # aws-native reads its Region from `aws-native:region`, not `aws:region`: an explicit
        # provider keeps the one `aws:region` of the stack authoritative for HyperPod too.
        self.provider = aws_native.Provider(
            f"{name}-aws-native", region=args.region, opts=pulumi.ResourceOptions(parent=self)
        )
        self.cluster = aws_native.sagemaker.Cluster(
            f"{name}-cluster",
            cluster_name=args.cluster_name,
            orchestrator={"eks": {"cluster_arn": args.eks_cluster_arn}},
            node_recovery="Automatic",
            node_provisioning_mode="Continuous",
            vpc_config={
                "security_group_ids": [args.security_group_id],
                "subnets": args.system_subnet_ids,
            },
            instance_groups=groups,
            tags=[{"key": k, "value": v} for k, v in sorted(args.tags.items())],
            opts=pulumi.ResourceOptions(
                parent=self,
                provider=self.provider,
                depends_on=[*self._policies, *args.depends_on],
                # HyperPod creation on p5 capacity (deep health checks) takes well over the
                # default 20 minutes.
                custom_timeouts=pulumi.CustomTimeouts(create="120m", update="120m", delete="60m"),
            ),
        )
        self.arn = self.cluster.cluster_arn
        self.register_outputs({"clusterArn": self.arn, "executionRoleArn": self.execution_role.arn})

    def _enforce_policies(self, groups: list[dict]) -> None:
        """Run the rules on the groups before anything is created (fail fast, clear message)."""
        urn = child_urn("hyperpod-dpd:infra:HyperPodCluster", CLUSTER_TYPE, f"{self._name}-cluster")
        props = {"instanceGroups": [camel_keys(plain(g)) for g in groups]}
        enforce([ResourceView(CLUSTER_TYPE, f"{self._name}-cluster", urn, props)])

    def _groups(self) -> list[tuple[str, InstanceGroupConfig]]:
        return sorted(self._args.groups.items())

    def _instance_group(
        self, group_name: str, group: InstanceGroupConfig, role_arn: pulumi.Input[str]
    ) -> dict:
        a = self._args
        spec: dict = {
            "instance_group_name": group_name,
            "instance_type": group.instance_type,
            "instance_count": group.instance_count,
            "execution_role": role_arn,
            "life_cycle_config": {
                "source_s3_uri": a.lifecycle_source_s3_uri,
                "on_create": a.lifecycle_on_create,
            },
            "instance_storage_configs": [
                {"ebs_volume_config": {"volume_size_in_gb": group.ebs_volume_size_gb}}
            ],
            "kubernetes_config": {
                "labels": node_labels(group_name, group),
                "taints": node_taints(group),
            },
        }
        if group.role in GPU_ROLES:
            spec.update(
                # One subnet, in the one GPU AZ, for every GPU group: EFA RDMA needs it.
                override_vpc_config={
                    "security_group_ids": [a.security_group_id],
                    "subnets": [a.gpu_subnet_id],
                },
                network_interface={"interface_type": "efa"},
                on_start_deep_health_checks=DEEP_HEALTH_CHECKS,
            )
        if group.training_plan_arn:
            spec["training_plan_arn"] = group.training_plan_arn
        return spec

    def _create_execution_role(self) -> aws.iam.Role:
        a = self._args
        role = aws.iam.Role(
            f"{self._name}-execution-role",
            assume_role_policy=service_trust("sagemaker.amazonaws.com"),
            tags=a.tags,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self._policies: list[pulumi.Resource] = [
            aws.iam.RolePolicyAttachment(
                f"{self._name}-execution-{policy.lower().replace('_', '-')}",
                role=role.name,
                policy_arn=managed_policy(a.partition, policy),
                opts=pulumi.ResourceOptions(parent=self),
            )
            for policy in EXECUTION_ROLE_POLICIES
        ]
        prefix = a.model_prefix.strip("/")
        self._policies.append(
            aws.iam.RolePolicy(
                f"{self._name}-execution-s3",
                role=role.id,
                policy=document(
                    allow(["s3:ListBucket"], [a.lifecycle_bucket_arn], "ListLifecycleScripts"),
                    allow(
                        ["s3:GetObject"],
                        [pulumi.Output.concat(a.lifecycle_bucket_arn, "/*")],
                        "ReadLifecycleScripts",
                    ),
                    {
                        **allow(["s3:ListBucket"], [a.model_bucket_arn], "ListModelPrefix"),
                        "Condition": {"StringLike": {"s3:prefix": [prefix, f"{prefix}/*"]}},
                    },
                    allow(
                        ["s3:GetObject"],
                        [pulumi.Output.concat(a.model_bucket_arn, f"/{prefix}/*")],
                        "ReadModelPrefix",
                    ),
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )
        )
        return role
