"""IAM roles as the components create them: a role, its managed policies, its inline policies.

Permission documents are pure data (specs/iam.py); trust documents, which name outputs such as
the cluster's OIDC issuer, are built here with `Output.json_dumps`, so no resource is ever
created inside an `apply` and the engine sees ordinary JSON text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from program.outputs import Outputs
from specs.base import Desired
from specs.iam import Statement, service_statement, source_scoped


@dataclass(frozen=True)
class RoleGrants:
    role: aws.iam.Role
    # What must exist before the role is used: its policy attachments and inline policies.
    grants: list[pulumi.Resource]


def role_with_policies(
    name: str,
    assume_role_policy: pulumi.Input[str],
    managed: Mapping[str, pulumi.Input[str]],
    *,
    parent: pulumi.Resource,
    tags: dict[str, str],
    **role_args: object,
) -> RoleGrants:
    """The role `name` and one RolePolicyAttachment per `managed` entry (attachment name ->
    policy ARN; names are keys of state, so they are given, never derived from positions)."""
    opts = pulumi.ResourceOptions(parent=parent)
    role = aws.iam.Role(
        name, assume_role_policy=assume_role_policy, tags=tags, opts=opts, **role_args
    )
    grants: list[pulumi.Resource] = [
        aws.iam.RolePolicyAttachment(attachment, role=role.name, policy_arn=arn, opts=opts)
        for attachment, arn in managed.items()
    ]
    return RoleGrants(role, grants)


def inline_policy(spec: Desired, outputs: Outputs, parent: pulumi.Resource) -> aws.iam.RolePolicy:
    """An inline policy registered from its spec (the role's id resolved from `outputs`)."""
    return aws.iam.RolePolicy(
        spec.name, **outputs.resolve(spec.kwargs()), opts=pulumi.ResourceOptions(parent=parent)
    )


def document(*statements: Statement) -> pulumi.Output[str]:
    return pulumi.Output.json_dumps({"Version": "2012-10-17", "Statement": list(statements)})


def service_trust(
    *services: str,
    source_account: pulumi.Input[str] | None = None,
    source_arn: pulumi.Input[str] | None = None,
) -> pulumi.Output[str]:
    """Trust policy letting AWS services (e.g. sagemaker.amazonaws.com) assume the role; with
    `source_account` (and `source_arn`, IAM wildcards allowed), only on behalf of this account's
    resources (IAM: the cross-service confused deputy problem,
    https://docs.aws.amazon.com/IAM/latest/UserGuide/confused-deputy.html)."""
    return document(source_scoped(service_statement(*services), source_account, source_arn))


def sagemaker_source_arn(
    partition: str, region: str, account_id: pulumi.Input[str], resource: str
) -> pulumi.Output[str]:
    """arn:<partition>:sagemaker:<region>:<account>:<resource> (e.g. "cluster/*")."""
    return pulumi.Output.concat(f"arn:{partition}:sagemaker:{region}:", account_id, f":{resource}")


def irsa_statement(
    oidc_provider_arn: pulumi.Input[str],
    oidc_issuer_url: pulumi.Input[str],
    namespace: str | tuple[str, ...],
    service_account: str,
) -> Statement:
    """Trust for exactly one Kubernetes service account through the cluster's OIDC provider (of
    that name in each of several namespaces: the condition lists them, any one matches)."""
    issuer = pulumi.Output.from_input(oidc_issuer_url).apply(lambda u: u.removeprefix("https://"))
    namespaces = (namespace,) if isinstance(namespace, str) else namespace
    subjects = [f"system:serviceaccount:{ns}:{service_account}" for ns in namespaces]
    return {
        "Effect": "Allow",
        "Principal": {"Federated": oidc_provider_arn},
        "Action": "sts:AssumeRoleWithWebIdentity",
        "Condition": {
            "StringEquals": {
                pulumi.Output.concat(issuer, ":sub"): (
                    subjects[0] if len(subjects) == 1 else subjects
                ),
                pulumi.Output.concat(issuer, ":aud"): "sts.amazonaws.com",
            }
        },
    }


def irsa_trust(
    oidc_provider_arn: pulumi.Input[str],
    oidc_issuer_url: pulumi.Input[str],
    namespace: str | tuple[str, ...],
    service_account: str,
) -> pulumi.Output[str]:
    return document(irsa_statement(oidc_provider_arn, oidc_issuer_url, namespace, service_account))


def pod_identity_trust(
    cluster_arn: pulumi.Input[str], account_id: pulumi.Input[str]
) -> pulumi.Output[str]:
    """Trust for EKS Pod Identity, limited to one cluster of this account."""
    return document(
        {
            "Effect": "Allow",
            "Principal": {"Service": "pods.eks.amazonaws.com"},
            "Action": ["sts:AssumeRole", "sts:TagSession"],
            "Condition": {
                "StringEquals": {"aws:SourceAccount": account_id},
                "ArnEquals": {"aws:SourceArn": cluster_arn},
            },
        }
    )
