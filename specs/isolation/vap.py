"""What the stack's ValidatingAdmissionPolicies share (admissionregistration.k8s.io/v1, GA in
Kubernetes 1.30: https://kubernetes.io/blog/2024/04/24/validating-admission-policy-ga/; every
Kubernetes version the stack offers is newer, core/versions.py): the shape of a policy and of a
binding, and the identities the policies trust, as CEL variables.

The operator: its controller's service account (core/vocabulary.py OPERATOR_SERVICE_ACCOUNT, in
OPERATOR_NAMESPACE). The admins: members of ADMINS_GROUP, the Kubernetes group the stack gives
the access entries of `eks.adminRoleArns` and the deploying role (infra/eks.py; EKS puts an
access entry's kubernetesGroups in its user's groups:
https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateAccessEntry.html), so `pulumi up`
itself is an admin. Cluster admins can remove these policies anyway; the group lets them debug
without doing so.

The namespaces are matched by `kubernetes.io/metadata.name`, which the API server sets to the
namespace's name and nobody can change (NAMESPACE_NAME_LABEL). The CEL reads only standard CEL
(no Kubernetes library, no optionals), so tests evaluate it with a CEL interpreter against
AdmissionReview-shaped requests (tests/specs/isolation/). ValidatingAdmissionPolicy reads every
field of `object`, metadata included (kubernetes/website#52303).
"""

from __future__ import annotations

from typing import Any

from core.vocabulary import (
    ADMINS_GROUP,
    NAMESPACE_NAME_LABEL,
    OPERATOR_NAMESPACE,
    OPERATOR_SERVICE_ACCOUNT,
)

API_VERSION = "admissionregistration.k8s.io/v1"
OPERATOR = f"system:serviceaccount:{OPERATOR_NAMESPACE}:{OPERATOR_SERVICE_ACCOUNT}"
# The variables that name whom a policy trusts (VAP spec.variables).
OPERATOR_VARIABLE = {"name": "operator", "expression": f"request.userInfo.username == '{OPERATOR}'"}
ADMIN_VARIABLE = {
    "name": "admin",
    "expression": f"has(request.userInfo.groups) && '{ADMINS_GROUP}' in request.userInfo.groups",
}


def policy(
    name: str, rules: list[dict[str, Any]], variables: list[dict], validations: list[dict]
) -> dict[str, Any]:
    """A policy refusing (failurePolicy Fail: an expression error refuses too) what
    `validations` do not all allow, for the requests `rules` match."""
    return {
        "apiVersion": API_VERSION,
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": rules},
            "variables": variables,
            "validations": validations,
        },
    }


def binding(policy_name: str, namespaces: tuple[str, ...]) -> dict[str, Any]:
    """`policy_name` enforced (Deny) in `namespaces` and nowhere else."""
    return {
        "apiVersion": API_VERSION,
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": policy_name},
        "spec": {
            "policyName": policy_name,
            "validationActions": ["Deny"],
            "matchResources": {
                "namespaceSelector": {
                    "matchExpressions": [
                        {"key": NAMESPACE_NAME_LABEL, "operator": "In", "values": list(namespaces)}
                    ]
                }
            },
        },
    }


def unchanged(path: str) -> str:
    """CEL: `path` (of the object, e.g. "metadata.labels") is the same in `object` and
    `oldObject`, absent in both included (`has()` on the last step)."""
    new, old = f"object.{path}", f"oldObject.{path}"
    return f"(has({new}) == has({old}) && (!has({new}) || {new} == {old}))"
