"""The offline plan: its four outputs, manifests, secrets, policy exit codes, determinism."""

from __future__ import annotations

import json
import shutil
import textwrap

import pytest
import yaml

from hyperpod_dpd.plan.engine import run_program
from hyperpod_dpd.plan.planner import Plan, kubernetes_manifests, make_plan, write_plan
from settings import parse_settings
from specs.schema import validate_manifest
from tests.conftest import ROOT, as_pulumi_config, edit, stack_raw, write_project
from tests.support.pinned_images import beside_tags, pinned

RESOURCE_KEYS = {"type", "name", "urn", "parent", "provider", "dependsOn", "protect", "inputs"}

K8S_PROGRAM = textwrap.dedent(
    """
    import pulumi
    import pulumi_kubernetes as k8s

    from program.stack_config import load_stack_config

    config = load_stack_config()
    provider = k8s.Provider("k8s", kubeconfig="{}")
    opts = pulumi.ResourceOptions(provider=provider)
    k8s.core.v1.Namespace("ns", metadata={"name": "inference"}, opts=opts)
    k8s.core.v1.Secret(
        "hf-token",
        metadata={"name": "hf-token", "namespace": "inference"},
        string_data={"token": config.hf_token},
        opts=opts,
    )
    pulumi.export("token", config.hf_token)
    """
)


@pytest.fixture(scope="module")
def dev_plan(tmp_path_factory):
    return make_plan(ROOT, "dev", tmp_path_factory.mktemp("plan") / "dev")


def test_plan_writes_its_outputs(dev_plan):
    out = dev_plan.out_dir
    assert sorted(p.name for p in out.iterdir()) == [
        "manifests",
        "plan.json",
        "policy-report.json",
        "resources.json",
        "summary.md",
    ]
    report = json.loads((out / "policy-report.json").read_text())["violations"]
    assert report and beside_tags(report) == []  # the images the repo's stacks run by tag
    assert dev_plan.exit_code == 0


def test_resources_json_shape(dev_plan):
    resources = json.loads((dev_plan.out_dir / "resources.json").read_text())
    assert len(resources) == len(dev_plan.run.resources) > 10
    for r in resources:
        assert set(r) >= RESOURCE_KEYS
        assert r["urn"].startswith("urn:pulumi:dev::hyperpod-dpd::")
    vpc = next(r for r in resources if r["type"] == "aws:ec2/vpc:Vpc")
    assert vpc["inputs"]["cidrBlock"] == "10.0.0.0/16"  # camelCase wire names


def test_summary_has_endpoint_resources_and_outputs(dev_plan):
    summary = (dev_plan.out_dir / "summary.md").read_text()
    assert "| Endpoint | llama-3-3-70b in namespace inference, mode dpd |" in summary
    assert "| PD buffer | 8 GiB per TP rank |" in summary
    assert "| `aws:ec2/subnet:Subnet` | 5 |" in summary
    assert "## Policy violations (2)" in summary  # the worker and Job images, run by tag
    assert "gpuAvailabilityZoneId" in summary
    # What the workers' policy admits, said whole: the operator's namespace is more than the
    # routers.
    assert (
        "| Pod ingress | NetworkPolicy llama-3-3-70b-workers: every pod of "
        "hyperpod-inference-system (each endpoint's router, the operator, its KEDA and load "
        "balancer controller), "
    ) in summary
    assert (
        "| Router ingress | NetworkPolicy routers-ingress in hyperpod-inference-system: its own "
        "pods, namespaces inference, hyperpod-dpd-benchmark, hyperpod-observability, addresses "
        "10.0.64.0/21, 10.0.72.0/21 (the private subnets: the EKS control plane, the load "
        "balancers, and any pod on a system node); the routers ask for no API key |"
    ) in summary
    assert "| Pod isolation | only the inference operator's pods (and the admins') run " in summary
    assert "NetworkPolicy no-instance-metadata keeps them from the instance metadata" in summary
    # ... and what closes the moment before the policy reaches a new pod.
    assert "the GPU nodes' boot script refuses it to their pods from the first packet" in summary


def test_plans_are_deterministic(tmp_path):
    first = make_plan(ROOT, "dev", tmp_path / "a")
    second = make_plan(ROOT, "dev", tmp_path / "b")
    for name in ("resources.json", "summary.md"):
        assert (first.out_dir / name).read_text() == (second.out_dir / name).read_text()


def _k8s_project(tmp_path, stack_text_extra: str = ""):
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    (tmp_path / "Pulumi.dev.yaml").write_text(
        (ROOT / "Pulumi.dev.yaml").read_text() + stack_text_extra
    )
    (tmp_path / "__main__.py").write_text(K8S_PROGRAM)
    return tmp_path


def test_manifests_are_written_per_kubernetes_object(tmp_path):
    project = _k8s_project(tmp_path, "  hyperpod-dpd:hfToken:\n    secure: v1:ENCRYPTED==\n")
    plan = make_plan(project, "dev", tmp_path / "out")
    files = sorted(p.name for p in (tmp_path / "out" / "manifests").iterdir())
    assert files == ["namespace._cluster.inference.yaml", "secret.inference.hf-token.yaml"]
    secret = yaml.safe_load((tmp_path / "out/manifests/secret.inference.hf-token.yaml").read_text())
    assert secret["apiVersion"] == "v1" and secret["kind"] == "Secret"
    assert secret["metadata"] == {"name": "hf-token", "namespace": "inference"}
    assert secret["stringData"] == "[secret]"
    assert plan.run.outputs["token"] == "[secret]"


def test_secret_plaintext_never_reaches_any_plan_file(tmp_path):
    token = "hf_THIS_MUST_NOT_LEAK_1234567890"
    raw = stack_raw("dev") | {"hyperpod-dpd:hfToken": token}
    program = _k8s_project(tmp_path) / "__main__.py"
    secret_keys = ["hyperpod-dpd:hfToken"]
    run = run_program(
        program, as_pulumi_config(raw), secret_keys, project="hyperpod-dpd", stack="dev"
    )
    from settings.stack_file import StackFile

    stack_file = StackFile("hyperpod-dpd", "dev", program, as_pulumi_config(raw), secret_keys)
    plan = Plan(
        stack_file,
        parse_settings(raw, secret_keys),
        run,
        [],
        kubernetes_manifests(run),
        tmp_path / "out",
    )
    write_plan(plan)
    written = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert len(written) == 6  # resources.json, 2 manifests, policy report, plan.json, summary
    for path in written:
        assert token not in path.read_text(), path
    assert "hf_" not in json.dumps([r.to_json() for r in run.resources])


def test_mandatory_violation_exits_1_and_is_reported(tmp_path):
    raw = edit(pinned(stack_raw("dev")), "hyperpod-dpd:endpoint.routingThreshold", 100)
    plan = make_plan(write_project(tmp_path / "project", raw), "dev", tmp_path / "out")
    assert plan.exit_code == 1 and plan.stopped and plan.registered_before_stop == 0
    report = json.loads((tmp_path / "out" / "policy-report.json").read_text())
    ((violation),) = report["violations"]
    assert violation["policy"] == "hyperpod-dpd-routing-threshold"
    assert violation["enforcement"] == "mandatory"
    assert violation["urn"] == (
        "urn:pulumi:dev::hyperpod-dpd::hyperpod-dpd:workloads:InferenceEndpoint"
        "$kubernetes:inference.sagemaker.aws.amazon.com/v1:InferenceEndpointConfig::endpoint-iec"
    )
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "routingThreshold 100 is below one LMCache chunk" in summary
    assert "0 resources were registered before the stop" in summary


def test_advisory_violation_keeps_exit_0(tmp_path):
    raw = edit(pinned(stack_raw("dev")), "hyperpod-dpd:endpoint.prefill.replicas", 2)
    edit(raw, "hyperpod-dpd:instanceGroups.prefill.instanceCount", 2)
    plan = make_plan(write_project(tmp_path / "project", raw), "dev", tmp_path / "out")
    assert plan.exit_code == 0 and not plan.stopped
    assert [(v.policy, v.enforcement) for v in plan.violations] == [
        ("hyperpod-dpd-routing-strategy", "advisory")
    ]
    assert len(plan.run.resources) > 100  # an advisory never stops the program


def test_a_stack_without_network_policies_is_told_its_workers_are_open(tmp_path):
    raw = pinned(stack_raw("dev")) | {"hyperpod-dpd:networkPolicy": {"enabled": False}}
    plan = make_plan(write_project(tmp_path / "project", raw), "dev", tmp_path / "out")
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "| Pod ingress | open: networkPolicy.enabled is false" in summary
    assert "| Router ingress | open: networkPolicy.enabled is false, any pod" in summary
    assert (
        "networkPolicy.enabled is false: pods on the system nodes can reach the node's IAM role"
    ) in summary
    # The routers' and the workers' policies, both missing.
    assert [(v.policy, v.enforcement) for v in plan.violations] == [
        ("hyperpod-dpd-pod-ingress", "advisory")
    ] * 2
    assert plan.exit_code == 0


def test_stale_files_of_a_previous_plan_are_removed(tmp_path):
    (tmp_path / "manifests").mkdir(parents=True)
    (tmp_path / "manifests" / "old.yaml").write_text("kind: Old\n")
    make_plan(ROOT, "dev", tmp_path)
    names = sorted(p.name for p in (tmp_path / "manifests").iterdir())
    assert "old.yaml" not in names
    assert "inferenceendpointconfig.inference.llama-3-3-70b.yaml" in names


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_first_preview_plans_of_the_repo_stacks(stack, tmp_path):
    """As the first `pulumi preview` of a new stack runs the program: outputs unknown."""
    plan = make_plan(ROOT, stack, tmp_path, preview=True)
    assert plan.exit_code == 0 and not plan.stopped and beside_tags(plan.violations) == []
    resources = json.loads((tmp_path / "resources.json").read_text())
    hyperpod = next(r for r in resources if r["name"] == "hyperpod-cluster")
    group = hyperpod["inputs"]["instanceGroups"][0]
    assert group["executionRole"] == "[unknown]"  # the role does not exist yet
    assert group["instanceType"].startswith("ml.")  # what the stack file says is known
    assert len(resources) == len(make_plan(ROOT, stack, tmp_path / "update").run.resources)


def test_the_plan_says_which_images_run_by_tag_and_which_are_pinned(dev_plan, tmp_path):
    summary = (dev_plan.out_dir / "summary.md").read_text()
    assert "## Images (0 pinned by digest, 2 by tag alone)" in summary
    assert "| hyperpod-dpd:jobs.image | `public.ecr.aws/docker/library/python:3.11-slim-bookworm` " \
        "| **by tag alone**: `hyperpod-dpd fetch --stack dev` prints the command" in summary  # fmt: skip
    # Every image pinned (as the commands fetch prints set them): the plan says so and is silent.
    raw = pinned(stack_raw("dev"))
    plan = make_plan(write_project(tmp_path / "project", raw), "dev", tmp_path / "out")
    assert plan.exit_code == 0 and plan.violations == []
    facts = json.loads((tmp_path / "out" / "plan.json").read_text())
    assert [(i["key"], i["pinned"]) for i in facts["images"]] == [
        ("hyperpod-dpd:endpoint.image", True),
        ("hyperpod-dpd:jobs.image", True),
    ]
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "## Images (2 pinned by digest, 0 by tag alone)" in summary
    # The IEC carries the pinned reference as written, and the operator's CRD takes it.
    path = tmp_path / "out" / "manifests" / "inferenceendpointconfig.inference.llama-3-3-70b.yaml"
    iec = yaml.safe_load(path.read_text())
    assert iec["spec"]["worker"]["image"] == raw["hyperpod-dpd:endpoint"]["image"]
    assert validate_manifest(iec, "3.3") == []
