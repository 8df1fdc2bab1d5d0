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
            # SageMaker, with no source condition: neither aws:SourceArn nor aws:SourceAccount.
            # No public source shows that HyperPod sends either when it assumes the role for a
            # node: SageMaker's confused deputy page gives per-feature examples (training,
            # processing, inference, ...), none for HyperPod
            # (https://docs.aws.amazon.com/sagemaker/latest/dg/security-confused-deputy-prevention.html),
            # and HyperPod's own templates trust sagemaker.amazonaws.com with no condition at all
            # (aws/sagemaker-hyperpod-cluster-setup eks/cloudformation/
            # sagemaker-iam-role-template.yaml at 225929764f92). A condition on a key the service
            # does not send never matches: the cluster could not assume its role and its nodes
            # would never join, at the first `pulumi up`. What scopes the role instead: only a
            # principal of this account can hand it to a cluster (iam:PassRole passes a role to
            # a service of the same account only,
            # https://docs.aws.amazon.com/IAM/latest/UserGuide/id_roles_use_passrole.html), so no
            # other account's HyperPod cluster runs its nodes as this role.
            service_trust("sagemaker.amazonaws.com"),
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
