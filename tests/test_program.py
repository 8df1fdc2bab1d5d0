"""Whole-program structure: components own their children, names are a stable contract."""

from __future__ import annotations

import pulumi
import pytest

from core.vocabulary import NETWORK_POLICY_TYPE
from tests.conftest import ROOT, run_stack, stack_raw


@pytest.fixture(scope="module")
def dev():
    return run_stack(stack_raw("dev"))


def test_every_resource_is_inside_a_component(dev):
    components = {r.urn: r for r in dev.resources if not r.custom}
    for r in dev.resources:
        if r.custom:
            assert r.parent in components, f"{r.name} is not inside a component"


def test_children_are_named_after_their_component(dev):
    components = {r.urn: r for r in dev.resources if not r.custom}
    for r in dev.resources:
        parent = components.get(r.parent)
        if parent is not None:
            assert r.name.startswith(f"{parent.name}-"), r.name


def test_component_type_tokens(dev):
    tokens = {r.type for r in dev.resources if not r.custom}
    assert tokens == {
        "hyperpod-dpd:infra:Network",
        "hyperpod-dpd:infra:Placement",
        "hyperpod-dpd:infra:Eks",
        "hyperpod-dpd:infra:EfaSecurityGroup",
        "hyperpod-dpd:infra:LifecycleScripts",
        "hyperpod-dpd:infra:SecureBucket",
        "hyperpod-dpd:infra:HyperPodDependencies",
        "hyperpod-dpd:infra:HyperPodCluster",
        "hyperpod-dpd:workloads:InferenceEndpoint",
        "hyperpod-dpd:infra:InferenceOperator",
        "hyperpod-dpd:infra:Observability",
        "hyperpod-dpd:workloads:CheckpointStaging",
        "hyperpod-dpd:workloads:BenchmarkAccess",
        "hyperpod-dpd:workloads:EndpointAdmission",
        "hyperpod-dpd:workloads:RouterIsolation",
        "hyperpod-dpd:infra:CiRunner",
    }


def test_resource_counts_of_the_repo_stacks(dev):
    prod = run_stack(stack_raw("prod"), stack="prod")
    # Prod: a third AZ (+1 private, +1 public subnet and their route-table links), a NAT
    # gateway, EIP and private route table per AZ (+2 each), a second admin role (+2); no
    # pull request previews it, so no read-only entry for their role (-2).
    assert len(prod.resources) - len(dev.resources) == 10


def test_every_component_registers_its_outputs_after_its_last_child(monkeypatch):
    """`register_outputs` says a component is complete; a child constructed after it (the EKS
    add-on that waits for nodes once was) is one its registered outputs cannot include. The
    order is the program's own (the engine sees registrations in whatever order they resolve)."""
    events: list[tuple[str, str]] = []  # ("child", parent name) / ("complete", component name)
    resource_init = pulumi.Resource.__init__
    register_outputs = pulumi.ComponentResource.register_outputs

    def init(self, t, name, custom, props=None, opts=None, *args, **kwargs):
        if opts is not None and isinstance(opts.parent, pulumi.ComponentResource):
            events.append(("child", opts.parent._name))
        resource_init(self, t, name, custom, props, opts, *args, **kwargs)
        self._name = name

    def completed(self, outputs):
        events.append(("complete", self._name))
        return register_outputs(self, outputs)

    monkeypatch.setattr(pulumi.Resource, "__init__", init)
    monkeypatch.setattr(pulumi.ComponentResource, "register_outputs", completed)
    run_stack(stack_raw("dev"), fresh=True)
    done: set[str] = set()
    for event, component in events:
        if event == "complete":
            done.add(component)
        else:
            assert component not in done, f"{component} got a child after register_outputs"
    assert len(done) >= 13, done


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_a_stack_with_one_endpoint_keeps_every_resource_of_before_several_endpoints(stack):
    """`pulumi up` after the upgrade that brought `endpoints` replaces or deletes nothing: the
    repo stacks register the very (type, name) pairs they registered before it (the list of
    main at 1ab6fa2, committed), so every URN the engine makes is the same."""
    run = run_stack(stack_raw(stack), stack=stack)
    now = sorted(f"{r.type} {r.name}" for r in run.resources)
    before = (ROOT / "tests" / "golden" / f"resources-{stack}-1ab6fa2.txt").read_text().splitlines()
    # Since then, the security work removed the nodes' all-traffic ingress from the whole VPC and
    # added the flow logs, the nodes' DNS egress, the workers' NetworkPolicy, the CI runner, each
    # namespace's metadata egress policy, the benchmark runner's own namespace and the endpoints'
    # admission policies, the routers' NetworkPolicy, the load balancer controller's deny of
    # internet-facing load balancers and its target registration, moved to an inline policy of
    # its role; the preview role's read-only entry is now the stack's
    # ci.previewRoleArn (dev) or gone (prod: pull requests no longer preview it). Nothing else of
    # before is gone or new.
    removed = {"aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule nodes-vpc-ingress"}
    removed |= {line for line in before if "eks-view-githubpulumipreview" in line}
    assert set(before) - set(now) == removed
    since = {
        f"{NETWORK_POLICY_TYPE} endpoint-network-policy",
        *(f"{NETWORK_POLICY_TYPE} {c}-metadata-egress" for c in ("endpoint", "checkpoint", "benchmark")),
        "kubernetes:core/v1:Namespace benchmark-namespace",
        "hyperpod-dpd:workloads:EndpointAdmission endpoint-admission",
        "aws:iam/rolePolicy:RolePolicy inference-operator-alb-controller-targets",
        "hyperpod-dpd:workloads:RouterIsolation routers",
        f"{NETWORK_POLICY_TYPE} routers-ingress",
        "aws:iam/rolePolicy:RolePolicy inference-operator-alb-internal-only",
    }  # fmt: skip
    added = {line for line in set(now) - set(before)
             if " network-flow-log" not in line and " nodes-egress-dns-" not in line
             and " ci-runner" not in line and " eks-view-hyperpod-dpd-dev-preview" not in line
             and " endpoint-admission-" not in line and line not in since}  # fmt: skip
    assert not added, sorted(added)
