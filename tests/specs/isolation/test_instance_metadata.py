"""No pod the stacks run can take its node's role: every pod of each namespace they run pods in
(each endpoint's, the benchmark runs', the staging Job's), whatever its labels, is kept from the
instance metadata service, and still reaches everything it needs, judged by the Kubernetes
semantics of the rendered NetworkPolicies (tests/workloads/network_paths.py). The Region, which
the pods no longer can ask the metadata service for, is in their environment."""

from __future__ import annotations

import botocore.session
import pytest

from core.vocabulary import (
    BENCHMARK_LABEL,
    BENCHMARK_NAMESPACE,
    CHECKPOINT_LABEL,
    DPD_ROLE_POD_LABEL,
    IEC_KIND,
    OBSERVABILITY_NAMESPACE,
    OPERATOR_NAMESPACE,
    STAGING_NAMESPACE,
)
from hyperpod_dpd.benchmark import job as benchmark_job
from hyperpod_dpd.plan.planner import kubernetes_manifests
from settings import parse_settings
from tests.conftest import run_stack, stack_raw
from tests.workloads.network_paths import Address, Pod, connects, leaves

METADATA = Address("169.254.169.254")
METADATA_V6 = Address("fd00:ec2::254")  # IMDS on Nitro instances' IPv6
GPU_IP = "10.0.5.9"  # the GPU subnet of the stacks' 10.0.0.0/16 VPC
# What the pods reach besides each other: (what, end, port, protocol).
NEEDED = [
    ("kube-dns pod", Pod("kube-system", {"k8s-app": "kube-dns"}, ip="10.0.64.20"), 53, "UDP"),
    ("kube-dns pod over TCP", Pod("kube-system", {"k8s-app": "kube-dns"}, ip="10.0.64.20"), 53, "TCP"),
    ("the cluster DNS Service", Address("172.20.0.10"), 53, "UDP"),
    ("the Kubernetes API Service", Address("172.20.0.1"), 443, "TCP"),
    ("the router", Pod(OPERATOR_NAMESPACE, {"app": "router"}, ip="10.0.64.30"), 8080, "TCP"),
    ("the OTLP collector", Pod(OBSERVABILITY_NAMESPACE, {"app": "otel"}, ip="10.0.64.40"), 4317, "TCP"),
    ("S3 (through the NAT gateway)", Address("52.219.100.1"), 443, "TCP"),
    ("STS, IRSA's token exchange", Address("3.33.150.1"), 443, "TCP"),
    ("ECR", Address("3.133.10.1"), 443, "TCP"),
    ("Hugging Face", Address("18.160.100.1"), 443, "TCP"),
    ("EKS Pod Identity's agent", Address("169.254.170.23"), 80, "TCP"),
    ("the Amazon DNS server", Address("169.254.169.253"), 53, "UDP"),
]  # fmt: skip


def _manifests(stack, raw=None):
    return list(kubernetes_manifests(run_stack(raw or stack_raw(stack), stack=stack)).values())


def _pods(manifests):
    """A pod of each kind each stack runs, and an unlabelled one in each of its namespaces."""
    pods = []
    for iec in (m for m in manifests if m["kind"] == IEC_KIND):
        name, namespace = iec["metadata"]["name"], iec["metadata"]["namespace"]
        roles = ["prefill", "decode"] if "pdSpec" in iec["spec"] else [None]
        for role in roles:
            labels = {"app": name, **({DPD_ROLE_POD_LABEL: role} if role else {})}
            pods.append(Pod(namespace, labels, ip=GPU_IP))
        pods.append(Pod(namespace, {}, ip=GPU_IP))
    pods.append(Pod(BENCHMARK_NAMESPACE, {BENCHMARK_LABEL: "20261207-0000-abcd"}, ip="10.0.64.9"))
    pods.append(Pod(STAGING_NAMESPACE, {CHECKPOINT_LABEL: "x"}, ip="10.0.64.8"))
    return pods


@pytest.fixture(scope="module", params=["dev", "prod", "canary"])
def stack(request):
    manifests = _manifests(request.param)
    return [m for m in manifests if m["kind"] == "NetworkPolicy"], _pods(manifests)


def test_no_pod_reaches_the_instance_metadata_service(stack):
    policies, pods = stack
    for pod in pods:
        for port in (80, 443, 8080):
            assert not leaves(policies, pod, METADATA, port), pod
        assert not leaves(policies, pod, METADATA_V6, 80), pod


@pytest.mark.parametrize(("what", "end", "port", "protocol"), NEEDED, ids=[n[0] for n in NEEDED])
def test_every_pod_still_reaches_what_it_needs(stack, what, end, port, protocol):
    policies, pods = stack
    for pod in pods:
        if what == "the router" and pod.namespace == STAGING_NAMESPACE:
            continue  # the staging Job calls no router; the routers admit no such namespace
        if isinstance(end, Pod):
            assert connects(policies, pod, end, port, protocol), (what, pod)
        else:
            assert leaves(policies, pod, end, port, protocol), (what, pod)


def test_the_roles_of_an_endpoint_still_reach_each_other(stack):
    """NIXL's side channel and LMCache's control messages between prefill and decode (EFA's
    transfers bypass the kernel and no policy)."""
    policies, pods = stack
    workers = [p for p in pods if DPD_ROLE_POD_LABEL in p.labels]
    for a in workers:
        for b in workers:
            if a.labels["app"] == b.labels["app"]:
                assert connects(policies, a, b, 5600), (a, b)


def test_each_namespace_has_one_rule_on_every_port():
    """The VPC CNI's agent keys its rules by CIDR: a second 0.0.0.0/0 rule limited to some ports
    overwrote the first (aws/aws-network-policy-agent#180). One rule, no ports."""
    policies = [m for m in _manifests("canary") if m["kind"] == "NetworkPolicy"]
    egress = [p for p in policies if "Egress" in p["spec"]["policyTypes"]]
    assert sorted(p["metadata"]["namespace"] for p in egress) == sorted(
        ["inference", BENCHMARK_NAMESPACE, STAGING_NAMESPACE]
    )
    for p in egress:
        assert p["spec"]["podSelector"] == {}  # every pod, whatever labels it sets
        (rule,) = p["spec"]["egress"]
        assert "ports" not in rule


def test_without_network_policies_there_is_nothing_to_enforce_them():
    """networkPolicy.enabled false leaves the VPC CNI not enforcing: no policy is rendered."""
    raw = stack_raw("dev")
    raw["hyperpod-dpd:networkPolicy"] = {"enabled": False}
    assert not [m for m in _manifests("dev", raw) if m["kind"] == "NetworkPolicy"]


def _env(container):
    return {e["name"]: e.get("value") for e in container.get("env") or []}


@pytest.mark.parametrize("stack_name", ["dev", "canary"])
def test_every_pod_is_told_its_region(stack_name):
    region = parse_settings(stack_raw(stack_name)).region
    manifests = _manifests(stack_name)
    expected = {"AWS_REGION": region, "AWS_DEFAULT_REGION": region}
    for iec in (m for m in manifests if m["kind"] == IEC_KIND):
        env = {e["name"]: e["value"] for e in iec["spec"]["worker"]["environmentVariables"]}
        assert expected.items() <= env.items(), iec["metadata"]["name"]
    (job,) = [m for m in manifests if m["kind"] == "Job"]
    (container,) = job["spec"]["template"]["spec"]["containers"]
    assert expected.items() <= _env(container).items()
    from tests.hyperpod_dpd.benchmark.job_factory import _run

    run = _run()
    (container,) = benchmark_job.job(run, {})["spec"]["template"]["spec"]["containers"]
    assert {"AWS_REGION": run.region, "AWS_DEFAULT_REGION": run.region}.items() <= _env(
        container
    ).items()


def test_hyperpod_takes_no_metadata_options_so_a_hop_limit_is_not_the_stacks_to_set():
    """HyperPod launches its nodes itself: CreateCluster's instance groups have no
    MetadataOptions (EC2's HttpPutResponseHopLimit). Should AWS add one, this fails: set the
    hop limit to 1 there, as well as the policies."""
    model = botocore.session.get_session().get_service_model("sagemaker")
    members = model.shape_for("ClusterInstanceGroupSpecification").members
    assert "InstanceGroupName" in members
    assert not [m for m in members if "etadata" in m or "Imds" in m]
