"""Who may run a pod in the namespaces whose pods hold what the stack guards, and what it may ask
for there: ValidatingAdmissionPolicies and their bindings (specs/isolation/vap.py says what
they share), assembled here for every namespace they bind.

Labels close nothing: the workers' NetworkPolicy admits the DPD role pods of their namespace
(specs/isolation/network_policies.py), any pod can carry any label, and the endpoints'
namespaces enforce Pod Security `privileged`. So no pod may run there that the inference
operator did not make.

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
  Kueue lifts) and metadata stay as open as before. Every pod, the operator's too, meets Pod
  Security `baseline` plus what the operator's workers need (specs/isolation/baseline.py).
- `WORKLOADS`: a Deployment, StatefulSet, DaemonSet or CronJob is created, or its pod template
  changed, by the operator or an admin only; a ReplicaSet or Job likewise, or by the controller
  that makes it from its owner (the deployment controller from a Deployment, the cronjob
  controller from a CronJob). Updates that leave the template as it was (scaling, labels, the
  controllers' own bookkeeping, the garbage collector's) pass.
- `MODELS` (specs/isolation/operator_resources.py): what the operator makes is decided by its
  custom resources there, written by the admins and the operator only.
So a user with `create pods`, `create deployments`, `create replicasets`, `create jobs` or
`create inferenceendpointconfigs` in the namespace is refused, and so is one who edits an
operator Deployment's template.

The stack's own namespaces get the same two policies with the admins alone trusted
(`STACK_PODS`, `STACK_WORKLOADS`): the staging Job's (STAGING_NAMESPACE: its service account
writes the model bucket, its pod reads the Hugging Face token) and the benchmark's
(BENCHMARK_NAMESPACE: the runner's service account reads the tokenizers and writes results,
the namespace holds the split's API key for in-cluster clients). `pulumi up` creates the staging
Job as the deploying role, an admin. `hyperpod-dpd benchmark run --stack` and `verify`'s prompt
pods create their Job and pod as the user who runs them, who must be an admin too: whoever
creates a pod there acts as the runner's IAM role and holds the API key, and in the stack's own
access model (infra/eks.py) only the admins can create anything in the cluster (viewers read);
any other principal got `create` there from a grant made outside the stack, which these
policies do not extend the role and the key to. Pods there meet Pod Security `restricted` (the
namespaces enforce it), so no `baseline` validations are repeated.

`CONNECT` (specs/isolation/connect.py): exec, attach, port-forward and proxy into all of these
namespaces' pods and the operator's, admins only.

When kube-controller-manager runs without per-controller credentials its controllers act as
`system:kube-controller-manager`, which is accepted wherever a controller is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.vocabulary import (
    ADMISSION_BINDING_TYPE,
    ADMISSION_POLICY_TYPE,
    BENCHMARK_NAMESPACE,
    OPERATOR_NAMESPACE,
    STAGING_NAMESPACE,
    SYSTEM_NAMESPACE,
)
from settings.stack import StackSettings
from specs.base import Desired
from specs.isolation.baseline import CONTAINERS, EPHEMERAL, VARIABLES, baseline_validations
from specs.isolation.connect import connect_policy
from specs.isolation.operator_resources import models_policy
from specs.isolation.vap import ADMIN_VARIABLE, OPERATOR_VARIABLE, binding, policy

PODS = "hyperpod-dpd-endpoint-pods"
WORKLOADS = "hyperpod-dpd-endpoint-workloads"
STACK_PODS = "hyperpod-dpd-stack-pods"
STACK_WORKLOADS = "hyperpod-dpd-stack-workloads"
# The stack's own namespaces that hold credentials (the module docstring says which).
STACK_GUARDED = (STAGING_NAMESPACE, BENCHMARK_NAMESPACE)
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


@dataclass(frozen=True)
class Trust:
    """Whom a namespace's pod and workload policies trust besides the controllers that make
    pods and ReplicaSets or Jobs for their owners: the CEL variables that name them, the
    expression true for any of them, and how the refusals name who makes pods there."""

    variables: tuple[dict[str, str], ...]
    trusted: str
    pods_by: str
    workloads_by: str


ENDPOINTS = Trust(
    (OPERATOR_VARIABLE, ADMIN_VARIABLE),
    "variables.operator || variables.admin",
    "the inference operator's workloads",
    "the inference operator",
)
STACK = Trust(
    (ADMIN_VARIABLE,),
    "variables.admin",
    "the stack's own Jobs",
    "the stack's admins (eks.adminRoleArns and the deploying role)",
)


def pods_policy(name: str, trust: Trust, extra: tuple[dict[str, Any], ...] = ()) -> dict[str, Any]:
    """Who creates pods and changes what they run; `extra`: more validations (baseline)."""
    by_controller = " || ".join(_owned_by(o, c) for o, c in POD_CONTROLLERS.items())

    def refusal(verb: str) -> str:  # CEL: "..." strings, the text may have an apostrophe
        return (
            f'"pods in " + request.namespace + " are {verb} by {trust.pods_by} only, not by " '
            "+ request.userInfo.username"
        )

    validations = [
        {
            "expression": f"request.operation != 'CREATE' || {trust.trusted} || {by_controller}",
            "messageExpression": refusal("created"),
            "reason": "Forbidden",
        },
        {
            # What a running pod runs (images, ephemeral containers): scheduling fields (gates a
            # queue controller lifts, tolerations) and metadata stay anyone's to update.
            "expression": f"request.operation != 'UPDATE' || {trust.trusted} || "
            f"(variables.containers == {CONTAINERS.format(o='oldObject')} && "
            f"variables.ephemeralContainers == {EPHEMERAL.format(o='oldObject')})",
            "messageExpression": refusal("changed"),
            "reason": "Forbidden",
        },
        *extra,
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
    return policy(name, rules, [*trust.variables, *VARIABLES], validations)


def workloads_policy(name: str, trust: Trust) -> dict[str, Any]:
    derived = " || ".join(
        f"(object.kind == '{kind}' && {_owned_by(owner, maker)})"
        for kind, (owner, maker) in DERIVED.items()
    )
    template = "(object.kind == 'CronJob' ? {o}.spec.jobTemplate : {o}.spec.template)"
    variables = [
        *trust.variables,
        {"name": "template", "expression": template.format(o="object")},
    ]
    unchanged = "request.operation == 'UPDATE' && variables.template == " + template.format(
        o="oldObject"
    )
    validations = [
        {
            "expression": f"{trust.trusted} || {derived} || ({unchanged})",
            "messageExpression": f'"workloads in " + request.namespace + " are made by '
            f'{trust.workloads_by} only: " + request.userInfo.username + " may not create '
            'them or change their pod template"',
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
    return policy(name, rules, variables, validations)


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
    """The policies `{name}-<part>` and their bindings `{name}-<part>-binding`: pods, workloads
    and the operator's resources bound to every endpoint's namespace of `s` ("default" too,
    when an endpoint runs there); stack-pods and stack-workloads to the stack's own guarded
    namespaces; connect to all of those and the operator's. `host_paths`: the weights caches'
    host directories (baseline.py)."""
    endpoints = tuple(sorted({x.config.namespace for x in s.entries()}))
    reached = tuple(sorted({*endpoints, *STACK_GUARDED, OPERATOR_NAMESPACE}))
    made = {
        "pods": (pods_policy(PODS, ENDPOINTS, tuple(baseline_validations(host_paths))), endpoints),
        "workloads": (workloads_policy(WORKLOADS, ENDPOINTS), endpoints),
        "models": (models_policy(), endpoints),
        "stack-pods": (pods_policy(STACK_PODS, STACK), STACK_GUARDED),
        "stack-workloads": (workloads_policy(STACK_WORKLOADS, STACK), STACK_GUARDED),
        "connect": (connect_policy(), reached),
    }
    policies = tuple(
        Desired(ADMISSION_POLICY_TYPE, f"{name}-{part}", parents, manifest)
        for part, (manifest, _) in made.items()
    )
    bindings = tuple(
        Desired(
            ADMISSION_BINDING_TYPE,
            f"{name}-{part}-binding",
            parents,
            binding(manifest["metadata"]["name"], namespaces),
        )
        for part, (manifest, namespaces) in made.items()
    )
    return AdmissionSpec(name, policies, bindings)
