"""Program runs kept across test sessions (tests/support/program_runs.py): an unchanged checkout
reads the runs an earlier session made; a change to anything a run depends on (the program and
what it imports or reads, the AWS rules a kept run passed, the code that keeps runs) starts from
none, and the directories of other states are removed. Editing a test that only reads runs keeps
them: that is the loop these runs are kept for."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.support import program_runs


def _checkout(root: Path) -> Path:
    subprocess.run(["git", "-C", str(root), "init", "--quiet"], check=True)
    for name, text in {
        ".gitignore": "build/\n",
        "__main__.py": "import infra\n",
        "infra/__init__.py": "LIMIT = 1\n",
        "tests/cfn/check.py": "RULES = []\n",
        "tests/conftest.py": "",
        "tests/test_infra.py": "def test_it(): pass\n",
    }.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    subprocess.run(["git", "-C", str(root), "add", "."], check=True)
    return root


def test_a_change_to_what_makes_a_run_starts_from_no_runs(tmp_path):
    root = _checkout(tmp_path)
    first = program_runs.kept_runs_directory(root)
    assert first is not None and first.is_dir()
    assert program_runs.kept_runs_directory(root) == first  # the next session, unchanged
    seen = {first}
    for name, text in (("infra/__init__.py", "LIMIT = 2\n"),  # the program
                       ("tests/cfn/check.py", "RULES = [1]\n"),  # a rule every kept run passed
                       ("tests/conftest.py", "# run_stack\n"),  # the code that keeps runs
                       ("specs/new.py", "")):  # a new module, not yet added to git  # fmt: skip
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
        here = program_runs.kept_runs_directory(root)
        assert here not in seen, name
        seen.add(here)
        assert [p.name for p in here.parent.iterdir()] == [here.name]  # the others removed


def test_editing_a_test_that_only_reads_runs_keeps_them(tmp_path):
    root = _checkout(tmp_path)
    first = program_runs.kept_runs_directory(root)
    (root / "tests" / "test_infra.py").write_text("def test_it(): assert True\n")
    (root / "build" / "other.txt").write_text("ignored by git")
    assert program_runs.kept_runs_directory(root) == first


def test_a_run_kept_by_one_session_is_read_by_the_next(tmp_path, monkeypatch):
    monkeypatch.setattr(program_runs, "SHARED_RUNS", tmp_path / "runs")
    made = []

    def run():
        made.append(1)
        return {"resources": 3}

    assert program_runs.shared_run(("config",), run) == {"resources": 3}
    assert program_runs.shared_run(("config",), run) == {"resources": 3}
    assert made == [1]


def test_outside_a_git_checkout_nothing_is_kept(tmp_path):
    assert program_runs.kept_runs_directory(tmp_path) is None


def test_runs_of_a_session_during_which_the_checkout_changed_are_not_kept(tmp_path):
    """A file saved while the suite ran: its runs may come from either state, under the name of
    the first; a later session of that first state must not read them."""
    root = _checkout(tmp_path)
    unchanged = program_runs.kept_runs_directory(root)
    program_runs.forget_if_changed(unchanged, root)
    assert unchanged.is_dir()
    (root / "infra" / "__init__.py").write_text("LIMIT = 3\n")  # mid-session
    program_runs.forget_if_changed(unchanged, root)
    assert not unchanged.exists()
