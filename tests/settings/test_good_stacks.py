"""The stacks users mean with the newer keys (tests/settings/good_stacks.py) plan as the command
line plans them: exit 0, advisories allowed, nothing refused on the way."""

from __future__ import annotations

import pytest

from core.exits import EXIT_OK
from hyperpod_dpd.cli import main
from tests.conftest import write_project
from tests.settings.good_stacks import GOOD_STACKS


@pytest.mark.long
@pytest.mark.parametrize("name", sorted(GOOD_STACKS))
def test_a_good_stack_plans(name, tmp_path, capsys):
    stack, build = GOOD_STACKS[name]
    project = write_project(tmp_path / "project", build(), stack)
    code = main(["plan", "--stack", stack, "--project-dir", str(project),
                 "--out", str(tmp_path / "plan")])  # fmt: skip
    out = capsys.readouterr()
    assert code == EXIT_OK, (out.out + out.err)[-3000:]
