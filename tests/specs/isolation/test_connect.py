"""Only the admins exec, attach, port-forward or proxy into the pods that hold what the stack
guards (specs/isolation/connect.py): the rendered policies judged by a CEL interpreter against
the AdmissionReview the API server sends for such a request (operation CONNECT, the
subresource, the options object: PodExecOptions and so on)."""

from __future__ import annotations

import pytest

from core.vocabulary import BENCHMARK_NAMESPACE, OPERATOR_NAMESPACE, STAGING_NAMESPACE
from tests.specs.isolation.admission_review import Request, admit
from tests.specs.isolation.conftest import ADMIN, ADMIN_GROUPS, NS
from tests.specs.isolation.operator_pods import USER

# What each request carries (k8s.io/api core/v1: PodExecOptions, PodAttachOptions,
# PodPortForwardOptions, PodProxyOptions, ServiceProxyOptions).
OPTIONS = {
    "pods/exec": {"kind": "PodExecOptions", "command": ["sh"], "stdin": True, "tty": True},
    "pods/attach": {"kind": "PodAttachOptions", "stdin": True},
    "pods/portforward": {"kind": "PodPortForwardOptions", "ports": [8000]},
    "pods/proxy": {"kind": "PodProxyOptions", "path": "/v1/chat/completions"},
    "services/proxy": {"kind": "ServiceProxyOptions", "path": "/v1/chat/completions"},
}
GUARDED = (NS, STAGING_NAMESPACE, BENCHMARK_NAMESPACE, OPERATOR_NAMESPACE)


def _connect(subresource: str, namespace: str, username: str, groups=("system:authenticated",)):
    resource, _, sub = subresource.partition("/")
    options = {"apiVersion": "v1", **OPTIONS[subresource]}
    return Request("CONNECT", namespace, username, options, groups=groups, resource=resource,
                   sub_resource=sub, name="decode-llama-7d9c5b6f4-x2k8q")  # fmt: skip


@pytest.mark.parametrize("subresource", sorted(OPTIONS))
@pytest.mark.parametrize("namespace", GUARDED)
def test_a_user_cannot_reach_into_a_guarded_pod(dev, subresource, namespace):
    decision = admit(dev, _connect(subresource, namespace, USER))
    assert not decision.allowed, (subresource, namespace)
    assert decision.messages == [
        f"exec, attach, port-forward and proxy into the pods of {namespace} are for the stack's "
        "admins (Kubernetes group hyperpod-dpd-admins: eks.adminRoleArns and the deploying role) "
        f"only, not for {USER}"
    ]


@pytest.mark.parametrize("subresource", sorted(OPTIONS))
def test_an_admin_may_debug_and_other_namespaces_stay_open(dev, subresource):
    for namespace in GUARDED:
        assert admit(dev, _connect(subresource, namespace, ADMIN, ADMIN_GROUPS)).allowed
    assert admit(dev, _connect(subresource, "team-b", USER)).allowed


def test_the_policy_matches_each_connect_by_its_subresource(dev):
    """The API server names a CONNECT by its subresource (resource pods, subresource exec):
    a rule listing only `pods` would never see one."""
    (policy,) = [m for m in dev if m["metadata"]["name"] == "hyperpod-dpd-pod-connect"
                 and m["kind"] == "ValidatingAdmissionPolicy"]  # fmt: skip
    (rule,) = policy["spec"]["matchConstraints"]["resourceRules"]
    assert rule["operations"] == ["CONNECT"] and sorted(rule["resources"]) == sorted(OPTIONS)
