"""The happy-path props factory: the resources the dev stack records, as the rules see them."""

from __future__ import annotations

import copy

import pytest

from policies.rules import ResourceView
from tests.conftest import run_stack, stack_raw
from tests.fix_hints import handed_stacks
from tests.support.pinned_images import pinned

_CACHE: dict[tuple[str, bool, bool], tuple[list[ResourceView], list[handed_stacks.Handed]]] = {}


def recorded(stack: str = "dev", preview: bool = False, by_tag: bool = False) -> list[ResourceView]:
    """A fresh deep copy of the stack's recorded resources (tests mutate them), its images pinned
    by digest (tests/support/pinned_images.py) unless `by_tag`; `preview`: as a first `pulumi preview`
    records them (outputs of resources not created yet unknown)."""

    def views() -> list[ResourceView]:
        raw = stack_raw(stack) if by_tag else pinned(stack_raw(stack))
        run = run_stack(raw, stack=stack, preview=preview)
        return [ResourceView(r.type, r.name, r.urn, r.inputs) for r in run.resources]

    # Kept with the stacks its run handed parse_settings (tests/fix_hints/handed_stacks.py).
    return copy.deepcopy(handed_stacks.kept(_CACHE, (stack, preview, by_tag), views))


def named(views: list[ResourceView], name: str) -> ResourceView:
    (view,) = [v for v in views if v.name == name]
    return view


def iec_spec(views: list[ResourceView]) -> dict:
    return named(views, "endpoint-iec").props["spec"]


def set_env(views, name, value=None):
    env = iec_spec(views)["worker"]["environmentVariables"]
    env[:] = [e for e in env if e["name"] != name]
    if value is not None:
        env.append({"name": name, "value": value})


def gpu_group(views, name="decode") -> dict:
    cluster = named(views, "hyperpod-cluster")
    return next(g for g in cluster.props["instanceGroups"] if g["instanceGroupName"] == name)


@pytest.fixture
def dev():
    return recorded("dev")
