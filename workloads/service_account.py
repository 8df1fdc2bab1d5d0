"""A Kubernetes service account with AWS credentials (IRSA): the role it assumes, trusted for
exactly that account through the cluster's OIDC provider, and the role's one inline policy
(from its spec, judged by the gate). What the staging Job and benchmark runs run as.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from infra.iam import inline_policy, irsa_trust
from program.outputs import Outputs
from specs.base import Desired


@dataclass(frozen=True)
class ClusterAccess:
    """How a workload reaches the cluster and how its pods get AWS credentials."""

    provider: k8s.Provider
    oidc_provider_arn: pulumi.Input[str]
    oidc_issuer_url: pulumi.Input[str]


@dataclass(frozen=True)
class AwsServiceAccount:
    namespace: str
    name: str
    policy: Desired  # the role's inline policy; its `role` placeholder is `{name}-role`'s id
    tags: dict[str, str] = field(default_factory=dict)


def aws_service_account(
    name: str,
    account: AwsServiceAccount,
    cluster: ClusterAccess,
    outputs: Outputs,
    parent: pulumi.Resource,
    depends_on: list[pulumi.Resource],
) -> tuple[k8s.core.v1.ServiceAccount, aws.iam.RolePolicy]:
    """`{name}-role`, its inline policy and `{name}-service-account` (children of `parent`).
    The account exists only once the role may act, so a pod using it never starts without its
    permissions."""
    role = aws.iam.Role(
        f"{name}-role",
        assume_role_policy=irsa_trust(
            cluster.oidc_provider_arn, cluster.oidc_issuer_url, account.namespace, account.name
        ),
        tags=account.tags,
        opts=pulumi.ResourceOptions(parent=parent),
    )
    outputs.publish(f"{name}-role", id=role.id)
    policy = inline_policy(account.policy, outputs, parent)
    service_account = k8s.core.v1.ServiceAccount(
        f"{name}-service-account",
        metadata={
            "name": account.name,
            "namespace": account.namespace,
            "annotations": {"eks.amazonaws.com/role-arn": role.arn},
        },
        opts=pulumi.ResourceOptions(
            parent=parent, provider=cluster.provider, depends_on=[*depends_on, policy]
        ),
    )
    return service_account, policy
