"""IAM policy documents as plain data. Every statement names its resources by ARN.

Documents are built from Outputs with `Output.json_dumps`, so no resource is ever created inside
an `apply`, and the engine (and the policy rules) see ordinary JSON text.
"""

from __future__ import annotations

from typing import Any

import pulumi

Statement = dict[str, Any]


def document(*statements: Statement) -> pulumi.Output[str]:
    return pulumi.Output.json_dumps({"Version": "2012-10-17", "Statement": list(statements)})


def allow(actions: list[str], resources: list[Any], sid: str | None = None) -> Statement:
    statement: Statement = {"Effect": "Allow", "Action": actions, "Resource": resources}
    if sid:
        statement["Sid"] = sid
    return statement


def service_statement(*services: str) -> Statement:
    return {"Effect": "Allow", "Principal": {"Service": list(services)}, "Action": "sts:AssumeRole"}


def service_trust(*services: str) -> pulumi.Output[str]:
    """Trust policy letting AWS services (e.g. sagemaker.amazonaws.com) assume the role."""
    return document(service_statement(*services))


def irsa_statement(
    oidc_provider_arn: pulumi.Input[str],
    oidc_issuer_url: pulumi.Input[str],
    namespace: str,
    service_account: str,
) -> Statement:
    """Trust for exactly one Kubernetes service account through the cluster's OIDC provider."""
    issuer = pulumi.Output.from_input(oidc_issuer_url).apply(lambda u: u.removeprefix("https://"))
    return {
        "Effect": "Allow",
        "Principal": {"Federated": oidc_provider_arn},
        "Action": "sts:AssumeRoleWithWebIdentity",
        "Condition": {
            "StringEquals": {
                pulumi.Output.concat(issuer, ":sub"): (
                    f"system:serviceaccount:{namespace}:{service_account}"
                ),
                pulumi.Output.concat(issuer, ":aud"): "sts.amazonaws.com",
            }
        },
    }


def irsa_trust(
    oidc_provider_arn: pulumi.Input[str],
    oidc_issuer_url: pulumi.Input[str],
    namespace: str,
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


def managed_policy(partition: str, name: str) -> str:
    return f"arn:{partition}:iam::aws:policy/{name}"
