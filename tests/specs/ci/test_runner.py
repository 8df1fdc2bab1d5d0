"""The CodeBuild runner's webhook (specs/ci/runner.py): each stack's runner takes the jobs of
the workflows that concern that stack, so a branch's pull-request job never lands inside prod's
VPC, and a rollout job only where there is a split to move."""

from __future__ import annotations

import re

import pytest

from specs.ci.runner import WORKFLOWS, runner_workflows
from tests.conftest import ROOT, run_stack, stack_raw


def _pattern(stack: str) -> str:
    run = run_stack(stack_raw(stack), stack=stack)
    (webhook,) = [r for r in run.resources if r.name == "ci-runner-webhook"]
    (group,) = webhook.inputs["filterGroups"]
    (name,) = [f for f in group["filters"] if f["type"] == "WORKFLOW_NAME"]
    return name["pattern"]


@pytest.mark.parametrize(
    ("stack", "taken"),
    [
        ("prod", {"deploy"}),  # pullRequestPreview false, no traffic split
        ("dev", {"deploy", "pull-request"}),  # pull requests preview dev
        ("canary", {"deploy", "rollout"}),  # the split the rollout moves
    ],
)
def test_each_stacks_runner_takes_only_its_own_workflows(stack, taken):
    pattern = re.compile(_pattern(stack))
    assert {w for w in WORKFLOWS if pattern.fullmatch(w)} == taken
    # Anchored: a workflow whose name merely contains one of them is not taken.
    assert not pattern.fullmatch("deploy-from-my-branch")


def test_the_names_are_the_workflows_names():
    """The filter matches the `name:` of .github/workflows/*.yml: a renamed workflow would
    otherwise leave its jobs queued forever."""
    import yaml

    names = {
        yaml.safe_load(p.read_text())["name"]
        for p in (ROOT / ".github" / "workflows").glob("*.yml")
    }
    assert set(WORKFLOWS) <= names


def test_a_stack_with_both_takes_all_three():
    assert runner_workflows(True, True) == WORKFLOWS
    assert runner_workflows(False, False) == ("deploy",)
