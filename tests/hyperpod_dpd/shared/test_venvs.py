"""A tool venv is rebuilt when it was built otherwise than its caller now asks (other packages,
another Python, no bytecode where its programs need it), and left alone when it holds what is
asked: hyperpod_dpd/shared/venvs.py."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from hyperpod_dpd.advise.engine import REQUIREMENTS as ADVISE_LOCK
from hyperpod_dpd.advise.engine import advise_venv
from hyperpod_dpd.shared import venvs
from tests.support.venv_builds import recorded_builds


def _synced(commands: list[list[str]]) -> list[list[str]]:
    return [c for c in commands if "sync" in c]


def test_a_venv_built_without_bytecode_is_rebuilt_for_the_simulator(tmp_path, monkeypatch):
    """A venv built from the advisor's lock without bytecode (by an older venv_from, or for a
    caller that did not ask) would start the simulator three times slower, for ever: the
    advisor's request for a compiled venv rebuilds it, once."""
    commands = recorded_builds(monkeypatch, uv="/x/uv")
    venv = tmp_path / "advise-venv"
    venvs.venv_from(ADVISE_LOCK, venv)
    assert "--compile-bytecode" not in _synced(commands)[0]
    commands.clear()
    advise_venv(venv, ADVISE_LOCK)
    (sync,) = _synced(commands)
    assert "--compile-bytecode" in sync
    commands.clear()
    advise_venv(venv, ADVISE_LOCK)
    # Compiled, it serves a caller that does not need bytecode as well.
    venvs.venv_from(ADVISE_LOCK, venv)
    assert commands == []


def test_pip_compiles_so_its_venv_serves_the_simulator(tmp_path, monkeypatch):
    """Without uv (the benchmark Job's image) pip installs, and pip byte-compiles always."""
    commands = recorded_builds(monkeypatch, uv=None)
    venvs.venv_from(ADVISE_LOCK, tmp_path / "venv")
    assert commands
    commands.clear()
    advise_venv(tmp_path / "venv", ADVISE_LOCK)
    assert commands == []


def test_a_venv_with_the_stamp_of_older_releases_is_rebuilt_once(tmp_path, monkeypatch, capsys):
    """Older releases stamped a venv with its requirements file's text alone (`.requirements`):
    what it was built with is unknown, so it is rebuilt, said on stderr, and then kept."""
    venv = tmp_path / "advise-venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").touch()
    (venv / ".requirements").write_text(ADVISE_LOCK.read_text())
    commands = recorded_builds(monkeypatch, uv="/x/uv")
    advise_venv(venv, ADVISE_LOCK)
    (sync,) = _synced(commands)
    assert "--compile-bytecode" in sync
    assert f"building {venv} from {ADVISE_LOCK.name}: it has no record" in capsys.readouterr().err
    commands.clear()
    advise_venv(venv, ADVISE_LOCK)
    assert commands == []
    assert capsys.readouterr().err == ""


def test_a_venv_built_for_another_python_is_rebuilt(tmp_path, monkeypatch, capsys):
    """The project's Python moved from one minor version to the next: the wheels the venv holds
    (pyarrow's, pydantic-core's) are built for the old one, so it is rebuilt."""
    commands = recorded_builds(monkeypatch, uv="/x/uv")
    venv = tmp_path / "advise-venv"
    monkeypatch.setattr(venvs, "interpreter", lambda python: "cpython-3.11")
    advise_venv(venv, ADVISE_LOCK)
    commands.clear()
    monkeypatch.setattr(venvs, "interpreter", lambda python: "cpython-3.12")
    advise_venv(venv, ADVISE_LOCK)
    assert _synced(commands)
    assert "built for cpython-3.11, not cpython-3.12" in capsys.readouterr().err


def test_a_venv_whose_interpreter_is_gone_is_rebuilt(tmp_path, monkeypatch):
    """The base Python a venv links to was removed (a patch release installed beside it, the old
    one deleted): its bin/python points nowhere, and it is rebuilt."""
    commands = recorded_builds(monkeypatch, uv="/x/uv")
    venv = tmp_path / "advise-venv"
    advise_venv(venv, ADVISE_LOCK)
    commands.clear()
    (venv / "bin" / "python").unlink()
    (venv / "bin" / "python").symlink_to(tmp_path / "removed-python3.11")
    advise_venv(venv, ADVISE_LOCK)
    assert _synced(commands)


def test_the_interpreter_is_named_alike_asked_or_known():
    """This interpreter, named by another path to it, is asked (a subprocess) and named as it
    names itself: a venv is not rebuilt for the path it was asked by."""
    other_path = os.path.realpath(sys.executable)
    if other_path == sys.executable:
        other_path = str(Path(sys.executable).parent / "." / Path(sys.executable).name)
    assert venvs.interpreter(other_path) == venvs.interpreter(sys.executable)
    assert (
        venvs.interpreter(sys.executable) == f"cpython-{sys.version_info[0]}.{sys.version_info[1]}"
    )


def test_a_venv_keeps_the_older_releases_stamp_for_a_checkout_that_shares_it(tmp_path, monkeypatch):
    """A checkout of an older release reads `.requirements` alone: written beside the new
    stamp, it finds the venv as it wants it and leaves it (rather than rebuilding it)."""
    recorded_builds(monkeypatch, uv="/x/uv")
    venv = tmp_path / "venv"
    venvs.venv_from(ADVISE_LOCK, venv)
    assert (venv / ".requirements").read_text() == ADVISE_LOCK.read_text()


def test_a_linked_venv_that_needs_a_rebuild_is_not_emptied_through_its_link(tmp_path, monkeypatch):
    """Another checkout's venv, linked here: the message names the link and where it points."""
    commands = recorded_builds(monkeypatch, uv="/x/uv")
    shared = tmp_path / "main-venv"
    venvs.venv_from(ADVISE_LOCK, shared)
    link = tmp_path / "worktree-venv"
    link.symlink_to(shared)
    commands.clear()
    with pytest.raises(ValueError) as refused:
        advise_venv(link, ADVISE_LOCK)  # asks for bytecode the shared venv lacks
    assert f"{link} is a link to {shared} (it was built without bytecode)" in str(refused.value)
    assert commands == [] and shared.is_dir()
