"""Who reaches an endpoint's workers: each path a user relies on stays open (router, the other
role, metrics, a namespace or addresses they name) and the ones the policy closes are shut (a pod
of another namespace on a GPU or a system node, another endpoint's colocated pods), judged by the
Kubernetes semantics of the rendered policies (tests/workloads/network_paths.py). Sources run on
the GPU subnet's addresses unless a test says otherwise, so no address range can stand in for
the selector a path needs."""

from __future__ import annotations

import json

import pytest

from core.versions import EKS_ADDON_VERSIONS
from core.vocabulary import (
    DPD_ROLE_POD_LABEL,
    OBSERVABILITY_NAMESPACE,
    OPERATOR_NAMESPACE,
)
from hyperpod_dpd.plan.planner import kubernetes_manifests
from tests.conftest import run_stack, stack_raw
from tests.workloads.network_paths import Pod, connects, reaches

NS = "hyperpod-dpd"
DEV = "llama-3-3-70b"  # Pulumi.dev.yaml's endpoint name
GPU_POD_IP = "10.0.5.9"  # the GPU subnet: 10.0.0.0/18 of the dev VPC 10.0.0.0/16
PRIVATE_IP = "10.0.64.10"  # a private subnet (10.0.64.0/21): the system nodes' pods, load balancers


def _policies(stack="dev", *edits):
    """Every NetworkPolicy of the stack (the workers' and the namespaces' metadata egress ones)."""
    raw = stack_raw(stack)
    for key, value in edits:
        raw[f"{NS}:{key}"] = value
    run = run_stack(raw, stack=stack)
    manifests = kubernetes_manifests(run).values()
    return [m for m in manifests if m["kind"] == "NetworkPolicy"], run


def _workers(policies):
    """The workers' (Ingress) policies among `policies` (not the routers', whose namespace is
    the operator's: tests/specs/isolation/test_routers.py)."""
    return [
        p
        for p in policies
        if "Ingress" in p["spec"]["policyTypes"]
        and p["metadata"]["namespace"] != OPERATOR_NAMESPACE
    ]


def _worker(name, role, app=None, namespace="inference"):
    labels = {"app": app or name}
    if role in ("prefill", "decode"):
        labels[DPD_ROLE_POD_LABEL] = role
    return Pod(namespace, labels, ip=GPU_POD_IP)


@pytest.fixture(scope="module")
def dev():
    return _policies("dev")[0]


@pytest.mark.parametrize("role", ["prefill", "decode"])
def test_the_router_reaches_each_role(dev, role):
    router = Pod(OPERATOR_NAMESPACE, {"app": f"{DEV}-inference-router"}, ip=GPU_POD_IP)
    assert reaches(dev, router, _worker(DEV, role))


@pytest.mark.parametrize("app_of", [lambda role: DEV, lambda role: f"{role}-{DEV}"])
def test_prefill_and_decode_reach_each_other_whichever_app_label_they_carry(dev, app_of):
    prefill = _worker(DEV, "prefill", app=app_of("prefill"))
    decode = _worker(DEV, "decode", app=app_of("decode"))
    assert connects(dev, prefill, decode) and connects(dev, decode, prefill)


def test_the_metrics_collector_reaches_the_workers(dev):
    collector = Pod(OBSERVABILITY_NAMESPACE, {"app": "otel"}, ip=GPU_POD_IP)
    assert reaches(dev, collector, _worker(DEV, "decode"))


def test_no_address_range_is_admitted_by_default(dev):
    """The system nodes' pods take the private subnets' addresses: admitting the load balancers
    there by range would admit any pod of any namespace scheduled on a system node."""
    on_system_node = Pod("team-b", {"app": "notebook"}, ip=PRIVATE_IP)
    assert not reaches(dev, on_system_node, _worker(DEV, "decode"))
    workers = _workers(dev)
    assert not any("ipBlock" in peer for p in workers for peer in p["spec"]["ingress"][0]["from"])


def test_a_pod_of_another_namespace_on_the_gpu_nodes_cannot_skip_the_router(dev):
    other = Pod("team-b", {"app": DEV}, ip=GPU_POD_IP)  # even with the endpoint's own label
    assert not reaches(dev, other, _worker(DEV, "decode"))
    assert not reaches(dev, other, _worker(DEV, "prefill"))


def test_only_the_endpoints_pods_are_selected(dev):
    """A pod the policy does not name (the benchmark runner in the same namespace) is left as it
    was: the policy fails open, never shut, when a pod carries other labels."""
    runner = Pod("inference", {"app.kubernetes.io/name": "benchmark-runner"}, ip=GPU_POD_IP)
    assert reaches(dev, Pod("team-b", ip=GPU_POD_IP), runner)


def test_in_a_shared_namespace_a_colocated_endpoint_cannot_reach_the_dpd_candidate():
    policies, _ = _policies("canary")
    assert sorted(p["metadata"]["name"] for p in _workers(policies)) == [
        "baseline-workers",
        "candidate-workers",
    ]
    baseline = _worker("baseline", "colocated")
    assert not reaches(policies, baseline, _worker("candidate", "decode"))
    assert not reaches(policies, baseline, _worker("candidate", "prefill"))
    # The candidate's roles still reach each other; the shared namespace's door is documented:
    # a DPD role pod of the namespace reaches the baseline (specs/isolation/network_policies.py).
    candidate = _worker("candidate", "prefill")
    assert connects(policies, candidate, _worker("candidate", "decode"))
    assert connects(policies, candidate, baseline)


def test_what_the_user_names_is_admitted_and_the_collector_only_when_observability_is_on():
    gateway = Pod("my-gateway", ip=GPU_POD_IP)
    balancer = Pod("", ip=PRIVATE_IP)  # a load balancer of theirs, registering pod IPs
    collector = Pod(OBSERVABILITY_NAMESPACE, ip=GPU_POD_IP)
    named, _ = _policies(
        "dev",
        ("networkPolicy", {"allowNamespaces": ["my-gateway"], "allowCidrs": ["10.0.64.0/24"]}),
    )
    assert reaches(named, gateway, _worker(DEV, "decode"))
    assert reaches(named, balancer, _worker(DEV, "decode"))
    assert not reaches(named, Pod("", ip="10.0.65.10"), _worker(DEV, "decode"))
    no_metrics, _ = _policies("dev", ("observability", {"enabled": False}))
    assert not reaches(no_metrics, collector, _worker(DEV, "decode"))
    assert not reaches(no_metrics, gateway, _worker(DEV, "decode"))


def _vpc_cni(run):
    (addon,) = [r for r in run.resources if r.name == "eks-vpc-cni"]
    return addon.inputs.get("configurationValues")


def test_the_vpc_cni_enforces_policies_only_when_there_are_policies():
    policies, run = _policies("dev")
    assert len(_workers(policies)) == 1
    assert json.loads(_vpc_cni(run)) == {"enableNetworkPolicy": "true"}
    policies, run = _policies("dev", ("networkPolicy", {"enabled": False}))
    assert policies == []
    assert _vpc_cni(run) is None


def test_the_endpoint_starts_after_its_policy_exists():
    """The IEC depends on the policy: no worker runs before its door is closed."""
    _, run = _policies("dev")
    (iec,) = [r for r in run.resources if r.name == "endpoint-iec"]
    assert any(d.endswith("::endpoint-network-policy") for d in iec.depends_on)


def test_every_pinned_vpc_cni_can_enforce_network_policies():
    """VPC CNI 1.14 brought NetworkPolicy enforcement (aws/amazon-vpc-cni-k8s
    docs/network-policy-faq.md); a pin below it would accept the policies and enforce none."""
    for addons in EKS_ADDON_VERSIONS.values():
        major, minor = (int(x) for x in addons["vpc-cni"].lstrip("v").split(".")[:2])
        assert (major, minor) >= (1, 14), addons["vpc-cni"]
