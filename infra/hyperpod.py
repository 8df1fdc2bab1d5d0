"""The SageMaker HyperPod cluster (aws-native: HyperPod exists only in Cloud Control),
registered from its spec (specs/hyperpod.py: the instance groups and why each field is set),
with its least-privilege execution role.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws
import pulumi_aws_native as aws_native

from core.vocabulary import HYPERPOD_CLUSTER
from infra.iam import inline_policy, role_with_policies, service_trust
from program.outputs import Outputs
from specs.hyperpod import EXECUTION_ROLE_POLICIES, HyperPodSpec
from specs.iam import managed_policy


@dataclass(frozen=True)
class HyperPodArgs:
    spec: HyperPodSpec
    outputs: Outputs  # resolves subnets, security group, EKS and bucket ARNs, lifecycle URI
    protect: bool = False  # deleting the cluster ends every node's deep health checks
    partition: str = "aws"
    region: str = "us-east-1"
    # The account the cluster is in: its execution role trusts SageMaker for that account's
    # HyperPod clusters only (None: no source conditions, for tests of other parts).
    account_id: pulumi.Input[str] | None = None
    tags: dict[str, str] = field(default_factory=dict)
    # The HyperPod dependencies release (SageMaker rejects the cluster without it) and the
    # uploaded lifecycle scripts (a node runs on_create.sh as it joins).
    depends_on: list[pulumi.Resource] = field(default_factory=list)


class HyperPodCluster(pulumi.ComponentResource):
    cluster: aws_native.sagemaker.Cluster
    execution_role: aws.iam.Role
    arn: pulumi.Output[str]

    def __init__(self, name: str, args: HyperPodArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(HYPERPOD_CLUSTER, name, None, opts)
        spec, out = args.spec, args.outputs
        execution = role_with_policies(
            f"{name}-execution-role",
            # Only on behalf of this account (aws:SourceAccount: SageMaker's confused deputy
            # prevention, "Limit Permissions With Global Condition Keys",
            # https://docs.aws.amazon.com/sagemaker/latest/dg/security-confused-deputy-prevention.html).
            # No aws:SourceArn: that page's per-feature examples (training, processing, inference
            # ...) name no HyperPod ARN, and HyperPod's own pages and templates trust
            # sagemaker.amazonaws.com with no condition at all (aws/sagemaker-hyperpod-cluster-setup
            # eks/cloudformation/sagemaker-iam-role-template.yaml at 225929764f92). Were HyperPod
            # to send no cluster ARN, an ArnLike on it would never match and the cluster could not
            # assume its role: its nodes would never join.
            service_trust("sagemaker.amazonaws.com", source_account=args.account_id),
            {
                f"{name}-execution-{policy.lower().replace('_', '-')}": managed_policy(
                    args.partition, policy
                )
                for policy in EXECUTION_ROLE_POLICIES
            },
            parent=self,
            tags=args.tags,
        )
        self.execution_role = execution.role
        out.publish(
            f"{name}-execution-role", arn=self.execution_role.arn, id=self.execution_role.id
        )
        grants = [*execution.grants, inline_policy(spec.execution_s3, out, self)]
        # aws-native reads its Region from `aws-native:region`, not `aws:region`: an explicit
        # provider keeps the one `aws:region` of the stack authoritative for HyperPod too.
        self.provider = aws_native.Provider(
            f"{name}-aws-native", region=args.region, opts=pulumi.ResourceOptions(parent=self)
        )
        self.cluster = aws_native.sagemaker.Cluster(
            spec.cluster.name,
            **out.resolve(spec.cluster.kwargs()),
            opts=pulumi.ResourceOptions(
                parent=self,
                provider=self.provider,
                protect=args.protect,
                depends_on=[*grants, *args.depends_on],
                # HyperPod creation on p5 capacity (deep health checks) takes well over the
                # default 20 minutes.
                custom_timeouts=pulumi.CustomTimeouts(create="120m", update="120m", delete="60m"),
            ),
        )
        self.arn = self.cluster.cluster_arn
        out.publish(spec.cluster.name, arn=self.arn)
        self.register_outputs({"clusterArn": self.arn, "executionRoleArn": self.execution_role.arn})
