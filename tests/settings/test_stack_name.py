"""The stack's name names the EKS and HyperPod clusters: a name Pulumi takes but either service
refuses is refused before anything is created, by the plan and by the program under `pulumi up`,
with a rename both take (settings/stack_name.py)."""

from __future__ import annotations

import re

import pytest

from core.aws.aws_facts import EKS_CLUSTER_NAME_PATTERN, HYPERPOD_CLUSTER_NAME_PATTERN
from core.cli_inputs import STACK_NAME
from hyperpod_dpd.cli import main
from hyperpod_dpd.plan.engine import run_program
from settings import ConfigError
from settings.stack_name import check_stack_name, usable_stack_name
from tests.conftest import ROOT, as_pulumi_config, edit, stack_raw, write_project

PROJECT = "hyperpod-dpd"


@pytest.mark.parametrize(
    ("stack", "renamed"),
    [("prod_us", "prod-us"), ("us-east-2.prod", "us-east-2-prod"), ("dev-", "dev"),
     ("team.llm__v2.", "team-llm-v2"), ("a" * 51, "a" * 50), ("x" * 49 + "_yz", "x" * 49)],
)  # fmt: skip
def test_a_name_pulumi_takes_and_a_cluster_does_not_is_refused_with_a_rename(stack, renamed):
    assert STACK_NAME.match(stack)  # Pulumi itself would take it
    (problem,) = check_stack_name(PROJECT, stack)
    text = problem.render()
    assert text.startswith(f"stack name: got '{stack}'; allowed: letters, digits and hyphens, at")
    assert f"clusters 'hyperpod-dpd-{stack}'" in text
    assert f"`pulumi stack rename {renamed}`" in text
    assert check_stack_name(PROJECT, renamed) == []  # the rename printed is taken


@pytest.mark.parametrize("stack", ["dev", "prod", "canary", "a" * 50, "us-east-2-prod", "-x"])
def test_names_both_services_take_pass(stack):
    assert check_stack_name(PROJECT, stack) == []
    name = f"{PROJECT}-{stack}"
    assert re.match(HYPERPOD_CLUSTER_NAME_PATTERN, name)
    assert re.match(EKS_CLUSTER_NAME_PATTERN, name)


def test_a_name_with_nothing_usable_gets_no_made_up_rename():
    assert usable_stack_name(PROJECT, "___") is None
    (problem,) = check_stack_name(PROJECT, "___")
    assert "rename the stack (`pulumi stack rename NAME`)" in problem.render()


def test_the_plan_refuses_it_with_the_stacks_other_problems_and_writes_nothing(tmp_path, capsys):
    raw = edit(stack_raw("dev"), "hyperpod-dpd:endpoint.tensorParallelSize", 0)
    project = write_project(tmp_path / "project", raw, stack="prod_us")
    out = tmp_path / "plan"
    code = main(["plan", "--stack", "prod_us", "--project-dir", str(project), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert "stack name: got 'prod_us'" in err and "pulumi stack rename prod-us" in err
    assert "hyperpod-dpd:endpoint.tensorParallelSize: got 0" in err  # all at once
    assert not out.exists()


def test_the_program_under_pulumi_up_stops_before_registering_anything():
    recorded: list = []
    with pytest.raises(ConfigError) as refused:
        run_program(
            ROOT / "__main__.py", as_pulumi_config(stack_raw("dev")), [],
            project=PROJECT, stack="prod_us", recorded=recorded,
        )  # fmt: skip
    assert "stack name: got 'prod_us'" in str(refused.value)
    assert recorded == []
