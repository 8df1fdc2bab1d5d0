"""Whole-program structure: components own their children, names are a stable contract."""

from __future__ import annotations

import pytest

from tests.conftest import run_stack, stack_raw


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
    }


def test_resource_counts_of_the_repo_stacks(dev):
    prod = run_stack(stack_raw("prod"), stack="prod")
    # Prod: a third AZ (+1 private, +1 public subnet and their route-table links), a NAT
    # gateway, EIP and private route table per AZ (+2 each), a second admin role (+2).
    assert len(prod.resources) - len(dev.resources) == 12
