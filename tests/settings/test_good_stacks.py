"""The stacks users mean with the newer keys (tests/settings/good_stacks.py) plan as the command
line plans them: exit 0, advisories allowed, nothing refused on the way.

Each config is judged alone as the plan judges it before running the program (its settings, then
every policy rule on its desired state: no mandatory violation); the program itself runs once
per stack file, the canary's configs all in one (a run is most of a plan's cost)."""

from __future__ import annotations

import pytest

from core.exits import EXIT_OK
from hyperpod_dpd.cli import main
from policies.gate import judgement
from settings.stack_file import read_stack
from tests.conftest import write_project
from tests.settings.good_stacks import CANARY_TOGETHER, GOOD_STACKS


@pytest.mark.parametrize("name", sorted(GOOD_STACKS))
def test_a_good_config_is_taken_and_breaks_no_mandatory_rule(name, tmp_path):
    stack, build = GOOD_STACKS[name]
    read = read_stack(write_project(tmp_path, build(), stack), stack)  # ConfigError: exit 2
    verdict = judgement(
        read.settings, read.file.project, stack, has_hf_token=read.file.has_hf_token
    )
    mandatory = [v for v in verdict.violations if v.enforcement == "mandatory"]
    assert not mandatory, [f"{v.policy}: {v.message}" for v in mandatory]


WHOLE = {"prod-pinned": GOOD_STACKS["prod-pinned"], "lists-dev": GOOD_STACKS["lists-dev"],
         "canary-together": CANARY_TOGETHER}  # fmt: skip


@pytest.mark.long
@pytest.mark.parametrize("name", sorted(WHOLE))
def test_the_good_configs_plan(name, tmp_path, capsys):
    stack, build = WHOLE[name]
    project = write_project(tmp_path / "project", build(), stack)
    code = main(["plan", "--stack", stack, "--project-dir", str(project),
                 "--out", str(tmp_path / "plan")])  # fmt: skip
    out = capsys.readouterr()
    assert code == EXIT_OK, (out.out + out.err)[-3000:]
