"""Who reaches the routers (specs/isolation/routers.py): the split's load balancer, the
benchmark runs and verify's prompts, the endpoints' own pods, the operator's other pods and the
EKS control plane (the webhooks) still do; a pod of another namespace on a GPU node, or an
address outside the private subnets, does not. Judged by the Kubernetes semantics of the
rendered policies (tests/workloads/network_paths.py), with the routers' labels unknown (any
labels a router could carry)."""

from __future__ import annotations

import pytest

from core.vocabulary import (
    BENCHMARK_NAMESPACE,
    OBSERVABILITY_NAMESPACE,
    OPERATOR_NAMESPACE,
    ROUTERS_POLICY,
)
from hyperpod_dpd.plan.planner import kubernetes_manifests
from tests.conftest import edit, run_stack, stack_raw
from tests.workloads.network_paths import Address, Pod, reaches

# dev's and canary's VPC is 10.0.0.0/16 (prod's 10.20.0.0/16, rewritten by `_in`).
GPU_IP = "10.0.5.9"  # the GPU subnet, 10.0.0.0/18
PRIVATE_IP = (
    "10.0.64.10"  # a private subnet: control plane interfaces, load balancers, system nodes
)
PUBLIC_IP = "10.0.128.10"  # a public subnet: NAT gateways, internet-facing load balancers
ROUTER_PORT = 8080  # the router's container port is not public either: every port is judged
# Labels a router might carry; the policy must hold whichever it does.
ROUTER_LABELS = [{}, {"app": "llama-3-3-70b-inference-router"}, {"anything": "at-all"}]


def _policies(stack="dev", raw=None):
    run = run_stack(raw or stack_raw(stack), stack=stack)
    return [m for m in kubernetes_manifests(run).values() if m["kind"] == "NetworkPolicy"]


@pytest.fixture(scope="module", params=["dev", "prod", "canary"])
def stack(request):
    return request.param, _policies(request.param)


def _in(stack, end):
    """`end` with its address moved into `stack`'s VPC (prod's is 10.20.0.0/16)."""
    if stack != "prod":
        return end
    from dataclasses import replace

    return replace(end, ip=end.ip.replace("10.0.", "10.20.", 1))


def _routers(ip=PRIVATE_IP):
    return [Pod(OPERATOR_NAMESPACE, labels, ip=ip) for labels in ROUTER_LABELS]


@pytest.mark.parametrize(
    ("who", "source"),
    [
        ("the split's load balancer (a private subnet)", Address(PRIVATE_IP)),
        ("the EKS control plane's interfaces (webhooks)", Address("10.0.72.9")),
        ("the benchmark Job on a GPU node", Pod(BENCHMARK_NAMESPACE, ip=GPU_IP)),
        ("an endpoint's worker", Pod("inference", {"app": "llama-3-3-70b"}, ip=GPU_IP)),
        ("KEDA, the operator (its own namespace)", Pod(OPERATOR_NAMESPACE, ip=GPU_IP)),
        ("the metrics collector", Pod(OBSERVABILITY_NAMESPACE, ip=GPU_IP)),
        ("the kubelet (the pod's own node)", Address(GPU_IP, on_same_node=True)),
    ],
)
def test_who_needs_the_routers_reaches_them(stack, who, source):
    name, policies = stack
    for router in _routers():
        assert reaches(policies, _in(name, source), _in(name, router), ROUTER_PORT), (who, router)


@pytest.mark.parametrize(
    ("who", "source"),
    [
        ("a pod of another namespace on a GPU node", Pod("team-b", {"app": "notebook"}, ip=GPU_IP)),
        ("the same, labelled as the operator's", Pod("team-b", {"app": "router"}, ip=GPU_IP)),
        ("an address of a public subnet", Address(PUBLIC_IP)),
        ("an address outside the VPC", Address("192.168.10.5")),
    ],
)
def test_a_pod_of_another_namespace_on_a_gpu_node_does_not(stack, who, source):
    name, policies = stack
    for router in _routers():
        for port in (ROUTER_PORT, 443, 9443):
            assert not reaches(policies, _in(name, source), _in(name, router), port), (who, port)


def test_pods_on_the_system_nodes_pass_and_it_is_said():
    """The private subnets are admitted for the control plane and the load balancers; the system
    nodes' pods take addresses there too, whatever their namespace (the module says so)."""
    on_system_node = Pod("team-b", ip=PRIVATE_IP)
    assert all(reaches(_policies(), on_system_node, r) for r in _routers())
    import specs.isolation.routers as module

    assert "a pod of any\n  namespace scheduled on a system node passes" in module.__doc__


def test_client_namespaces_are_admitted_to_the_routers_only():
    raw = edit(stack_raw("dev"), "hyperpod-dpd:networkPolicy", {"clientNamespaces": ["my-app"]})
    policies = _policies("dev", raw)
    app = Pod("my-app", ip=GPU_IP)
    assert all(reaches(policies, app, r) for r in _routers())
    worker = Pod("inference", {"app": "llama-3-3-70b"}, ip=GPU_IP)
    assert not reaches(policies, app, worker)
    assert not any(reaches(_policies(), app, r) for r in _routers())


def test_one_policy_selecting_every_pod_of_the_operators_namespace():
    (policy,) = [p for p in _policies() if p["metadata"]["namespace"] == OPERATOR_NAMESPACE]
    assert policy["metadata"]["name"] == ROUTERS_POLICY
    assert policy["spec"]["podSelector"] == {}
    assert policy["spec"]["policyTypes"] == ["Ingress"]


def test_no_policy_without_network_policies():
    raw = edit(stack_raw("dev"), "hyperpod-dpd:networkPolicy", {"enabled": False})
    assert not [
        p for p in _policies("dev", raw) if p["metadata"]["namespace"] == OPERATOR_NAMESPACE
    ]


def test_the_endpoints_start_after_the_routers_policy():
    run = run_stack(stack_raw("dev"), stack="dev")
    (iec,) = [r for r in run.resources if r.name == "endpoint-iec"]
    assert any(d.endswith("::routers-ingress") for d in iec.depends_on)
