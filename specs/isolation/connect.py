"""Who may reach into a running pod through the API server: `kubectl exec`, `attach`,
`port-forward` and the API server's proxy, in the namespaces whose pods hold what the stack
guards. Only the admins.

The admission policies on pods (specs/isolation/admission.py) decide which pods run; these
requests reach pods that already run, past them: exec and attach run commands in a worker (its
service account's token, the Hugging Face token of the staging Job, the runner's IAM role),
port-forward and the proxies reach a pod's port through the kubelet or the API server, which
no NetworkPolicy filters (the kubelet connects from the node's own network namespace:
sapcc/helm-charts#12297 closes exactly this with a ValidatingAdmissionPolicy, after its
NetworkPolicy attempt, #12039, could not). The API server admits each such request as the
operation CONNECT on the subresource (pods/exec, pods/attach, pods/portforward, pods/proxy,
services/proxy), which a policy's resourceRules match like any other
(https://kubernetes.io/docs/reference/kubernetes-api/policy-resources/validating-admission-policy-v1/:
operations CREATE, UPDATE, DELETE, CONNECT).

Bound to the endpoints' namespaces (the workers: vLLM answers without a key, specs/traffic/__init__.py),
the operator's (the routers, and the operator, load balancer controller and KEDA with their IAM
roles), the staging Job's (write access to the model bucket) and the benchmark's (the runner's
role and the split's API key). `kubectl logs` is a GET of pods/log, not a CONNECT: it stays open
to whoever RBAC lets read logs.
"""

from __future__ import annotations

from typing import Any

from core.vocabulary import ADMINS_GROUP
from specs.isolation.vap import ADMIN_VARIABLE, policy

CONNECT = "hyperpod-dpd-pod-connect"
SUBRESOURCES = ("pods/exec", "pods/attach", "pods/portforward", "pods/proxy", "services/proxy")


def connect_policy() -> dict[str, Any]:
    rules = [
        {
            "apiGroups": [""],
            "apiVersions": ["v1"],
            "operations": ["CONNECT"],
            "resources": list(SUBRESOURCES),
        }
    ]
    validations = [
        {
            "expression": "variables.admin",
            "messageExpression": '"exec, attach, port-forward and proxy into the pods of " + '
            f"request.namespace + \" are for the stack's admins (Kubernetes group {ADMINS_GROUP}: "
            'eks.adminRoleArns and the deploying role) only, not for " + '
            "request.userInfo.username",
            "reason": "Forbidden",
        }
    ]
    return policy(CONNECT, rules, [ADMIN_VARIABLE], validations)
