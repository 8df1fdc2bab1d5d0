"""Who may run a pod in an endpoint's namespace, and what it may ask for there: two
ValidatingAdmissionPolicies bound to the endpoints' namespaces (admissionregistration.k8s.io/v1,
GA in Kubernetes 1.30: https://kubernetes.io/blog/2024/04/24/validating-admission-policy-ga/;
every Kubernetes version the stack offers is newer, core/versions.py).

Labels close nothing: the workers' NetworkPolicy admits the DPD role pods of their namespace
(specs/isolation/network_policies.py), any pod can carry any label, and the namespace enforces
Pod Security `privileged`. So no pod may run there that the inference operator did not make.

Pods are not created by the operator but by kube-controller-manager's controllers, each with a
service account of its own (`system:serviceaccount:kube-system:replicaset-controller` and so on:
https://kubernetes.io/docs/reference/access-authn-authz/rbac/#controller-roles; EKS's API server
log shows pod creations by that user, e.g. https://docs.hunters.ai/docs/aws-eks-control-plane-logging),
from a ReplicaSet the deployment controller made from a Deployment the operator made. Neither
the Pod nor its controller's request says whose Deployment it was, and an admission policy
reads only the request, so the chain is closed link by link:
- `PODS`: a pod is created by the operator, by an admin, or by the controller that owns it (its
  `controller: true` owner reference names that controller's kind: a ReplicaSet's pod by the
  replicaset controller, a Job's by the job controller...); any other creator is refused. What
  a running pod runs (its containers' images, ephemeral containers: `kubectl debug`) changes
  only by the operator or an admin; its scheduling fields (the gates a queue controller such as
  Kueue lifts) and metadata stay as open as before. Every pod, the operator's too, meets Pod Security `baseline` plus what the operator's
  workers need (specs/isolation/baseline.py).
- `WORKLOADS`: a Deployment, StatefulSet, DaemonSet or CronJob is created, or its pod template
  changed, by the operator or an admin only; a ReplicaSet or Job likewise, or by the controller
  that makes it from its owner (the deployment controller from a Deployment, the cronjob
  controller from a CronJob). Updates that leave the template as it was (scaling, labels, the
  controllers' own bookkeeping, the garbage collector's) pass.
So a user with `create pods`, `create deployments`, `create replicasets` or `create jobs` in the
namespace is refused, and so is one who edits an operator Deployment's template.

The operator: its controller's service account (core/vocabulary.py OPERATOR_SERVICE_ACCOUNT, in
OPERATOR_NAMESPACE). The admins: members of ADMINS_GROUP, the Kubernetes group the stack gives
the access entries of `eks.adminRoleArns` and the deploying role (infra/eks.py; EKS puts an
access entry's kubernetesGroups in its user's groups:
https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateAccessEntry.html). Cluster admins can remove these policies
anyway; the group lets them debug without doing so. When kube-controller-manager runs without
per-controller credentials its controllers act as `system:kube-controller-manager`, which is
accepted wherever a controller is.

The namespaces are matched by `kubernetes.io/metadata.name`, which the API server sets to the
namespace's name and nobody can change (NAMESPACE_NAME_LABEL). The CEL reads only standard CEL
(no Kubernetes library, no optionals), so tests evaluate it with a CEL interpreter against
AdmissionReview-shaped requests (tests/specs/isolation/). ValidatingAdmissionPolicy reads every
field of `object`, metadata included (kubernetes/website#52303).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.vocabulary import (
    ADMINS_GROUP,
    ADMISSION_BINDING_TYPE,
    ADMISSION_POLICY_TYPE,
    NAMESPACE_NAME_LABEL,
    OPERATOR_NAMESPACE,
    OPERATOR_SERVICE_ACCOUNT,
    SYSTEM_NAMESPACE,
)
from settings.stack import StackSettings
from specs.base import Desired
from specs.isolation.baseline import CONTAINERS, EPHEMERAL, VARIABLES, baseline_validations

API_VERSION = "admissionregistration.k8s.io/v1"
PODS = "hyperpod-dpd-endpoint-pods"
WORKLOADS = "hyperpod-dpd-endpoint-workloads"
OPERATOR = f"system:serviceaccount:{OPERATOR_NAMESPACE}:{OPERATOR_SERVICE_ACCOUNT}"
CONTROLLER_MANAGER = "system:kube-controller-manager"
# Who creates pods for which owner: kube-controller-manager's controllers, each as the service
# account kube-system/<name> its RBAC role `system:controller:<name>` is bound to
# (kubernetes/kubernetes plugin/pkg/auth/authorizer/rbac/bootstrappolicy/controller_policy.go:
# `daemon-set-controller` with dashes, the others as written here).
POD_CONTROLLERS = {
    "apps/v1 ReplicaSet": "replicaset-controller",
    "apps/v1 StatefulSet": "statefulset-controller",
    "apps/v1 DaemonSet": "daemon-set-controller",
    "batch/v1 Job": "job-controller",
}
# Workloads one controller makes from another: the kind made -> (its owner's kind, the maker).
DERIVED = {
    "ReplicaSet": ("apps/v1 Deployment", "deployment-controller"),
    "Job": ("batch/v1 CronJob", "cronjob-controller"),
}
# What WORKLOADS guards (those whose pods POD_CONTROLLERS make, and what makes them).
WORKLOAD_RESOURCES = {
    "apps": ("deployments", "replicasets", "statefulsets", "daemonsets"),
    "batch": ("jobs", "cronjobs"),
}


def controller(name: str) -> str:
    """A kube-controller-manager controller's user name."""
    return f"system:serviceaccount:{SYSTEM_NAMESPACE}:{name}"


def _owned_by(owner: str, name: str) -> str:
    """The request is `name`'s (a controller) and the object's controller is an `owner`
    ("apps/v1 ReplicaSet")."""
    api_version, kind = owner.split()
    users = f"['{controller(name)}', '{CONTROLLER_MANAGER}']"
    return (
        f"(request.userInfo.username in {users} && has(object.metadata.ownerReferences) && "
        "object.metadata.ownerReferences.exists(r, has(r.controller) && r.controller && "
        f"r.apiVersion == '{api_version}' && r.kind == '{kind}'))"
    )


# The variables both policies read.
TRUSTED = (
    {"name": "operator", "expression": f"request.userInfo.username == '{OPERATOR}'"},
    {
        "name": "admin",
        "expression": f"has(request.userInfo.groups) && '{ADMINS_GROUP}' in request.userInfo.groups",
    },
)


def _policy(
    name: str, rules: list[dict[str, Any]], variables: list[dict], validations: list[dict]
) -> dict[str, Any]:
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


def pods_policy(host_paths: tuple[str, ...]) -> dict[str, Any]:
    """The pods' policy; `host_paths`: the weights caches' host directories (baseline.py)."""
    by_controller = " || ".join(_owned_by(o, c) for o, c in POD_CONTROLLERS.items())

    def refusal(verb: str) -> str:  # CEL: "..." strings, the text has an apostrophe
        return (
            f'"pods in " + request.namespace + " are {verb} by the inference operator\'s '
            'workloads only, not by " + request.userInfo.username'
        )

    validations = [
        {
            "expression": "request.operation != 'CREATE' || variables.operator || "
            f"variables.admin || {by_controller}",
            "messageExpression": refusal("created"),
            "reason": "Forbidden",
        },
        {
            # What a running pod runs (images, ephemeral containers): scheduling fields (gates a
            # queue controller lifts, tolerations) and metadata stay anyone's to update.
            "expression": "request.operation != 'UPDATE' || variables.operator || "
            "variables.admin || (variables.containers == "
            f"{CONTAINERS.format(o='oldObject')} && variables.ephemeralContainers == "
            f"{EPHEMERAL.format(o='oldObject')})",
            "messageExpression": refusal("changed"),
            "reason": "Forbidden",
        },
        *baseline_validations(host_paths),
    ]
    rules = [
        {
            "apiGroups": [""],
            "apiVersions": ["v1"],
            "operations": ["CREATE", "UPDATE"],
            # Ephemeral containers are added through their own subresource.
            "resources": ["pods", "pods/ephemeralcontainers"],
        }
    ]
    return _policy(PODS, rules, [*TRUSTED, *VARIABLES], validations)


def workloads_policy() -> dict[str, Any]:
    derived = " || ".join(
        f"(object.kind == '{kind}' && {_owned_by(owner, maker)})"
        for kind, (owner, maker) in DERIVED.items()
    )
    template = "(object.kind == 'CronJob' ? {o}.spec.jobTemplate : {o}.spec.template)"
    variables = [
        *TRUSTED,
        {"name": "template", "expression": template.format(o="object")},
    ]
    unchanged = "request.operation == 'UPDATE' && variables.template == " + template.format(
        o="oldObject"
    )
    validations = [
        {
            "expression": f"variables.operator || variables.admin || {derived} || ({unchanged})",
            "messageExpression": "'workloads in ' + request.namespace + ' are made by the "
            "inference operator only: ' + request.userInfo.username + ' may not create them "
            "or change their pod template'",
            "reason": "Forbidden",
        }
    ]
    rules = [
        {
            "apiGroups": [group],
            "apiVersions": ["v1"],
            "operations": ["CREATE", "UPDATE"],
            "resources": list(resources),
        }
        for group, resources in WORKLOAD_RESOURCES.items()
    ]
    return _policy(WORKLOADS, rules, variables, validations)


def binding(policy: str, namespaces: tuple[str, ...]) -> dict[str, Any]:
    """`policy` enforced (Deny) in `namespaces` and nowhere else."""
    return {
        "apiVersion": API_VERSION,
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": policy},
        "spec": {
            "policyName": policy,
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


@dataclass(frozen=True)
class AdmissionSpec:
    name: str
    policies: tuple[Desired, ...]
    bindings: tuple[Desired, ...]

    def resources(self) -> list[Desired]:
        return [*self.policies, *self.bindings]


def endpoint_admission(
    name: str, parents: tuple[str, ...], s: StackSettings, host_paths: tuple[str, ...]
) -> AdmissionSpec:
    """The policies `{name}-pods` and `{name}-workloads` and their bindings to every endpoint's
    namespace of `s` ("default" too, when an endpoint runs there)."""
    namespaces = tuple(sorted({x.config.namespace for x in s.entries()}))
    made = {"pods": pods_policy(host_paths), "workloads": workloads_policy()}
    policies = tuple(
        Desired(ADMISSION_POLICY_TYPE, f"{name}-{part}", parents, manifest)
        for part, manifest in made.items()
    )
    bindings = tuple(
        Desired(
            ADMISSION_BINDING_TYPE,
            f"{name}-{part}-binding",
            parents,
            binding(manifest["metadata"]["name"], namespaces),
        )
        for part, manifest in made.items()
    )
    return AdmissionSpec(name, policies, bindings)
