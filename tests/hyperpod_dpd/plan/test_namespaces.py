"""The namespaces an endpoint may not use are the ones the stack itself installs into
(core/vocabulary.py STACK_NAMESPACES): every namespace the dev, prod and canary plans
name (a Kubernetes object's, a Helm release's, an IRSA trust's service account) is either an
endpoint's own or on that list, so an endpoint can never be put in one of them."""

from __future__ import annotations

import re
from typing import Any

import pytest

from core.vocabulary import RESERVED_NAMESPACES
from hyperpod_dpd.plan.planner import make_plan
from tests.conftest import ROOT

SERVICE_ACCOUNT = re.compile(r"system:serviceaccount:([a-z0-9-]+):")


def _namespaces(node: Any, out: set[str]) -> set[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "namespace" and isinstance(value, str):
                out.add(value)
            _namespaces(value, out)
        if node.get("kind") == "Namespace":
            out.add(node.get("metadata", {}).get("name"))
    elif isinstance(node, list):
        for value in node:
            _namespaces(value, out)
    elif isinstance(node, str):
        out.update(SERVICE_ACCOUNT.findall(node))
    return out


@pytest.mark.parametrize("stack", ["dev", "prod", "canary"])
def test_every_namespace_a_plan_names_is_an_endpoint_s_or_reserved(stack, tmp_path):
    plan = make_plan(ROOT, stack, tmp_path / stack)
    found: set[str] = set()
    for resource in plan.run.resources:
        _namespaces(resource.inputs, found)
        if resource.type == "kubernetes:core/v1:Namespace":
            found.add(resource.inputs.get("metadata", {}).get("name"))
    endpoints = {x.config.namespace for x in plan.settings.entries()}
    stacks_own = found - endpoints - {None}
    assert stacks_own, found  # the operator's and the staging namespace at least
    assert stacks_own <= set(RESERVED_NAMESPACES), stacks_own - set(RESERVED_NAMESPACES)
