"""The commands `hyperpod_dpd.shared.venvs.venv_from` runs, recorded instead of run: a venv
"built" this way is a directory with a bin/python file, enough for venv_from to see it as there."""

from __future__ import annotations

from pathlib import Path

from hyperpod_dpd.shared import venvs


def recorded_builds(monkeypatch, uv: str | None) -> list[list[str]]:
    """The commands venv_from runs (nothing is run), with uv found at `uv` or not at all."""
    commands: list[list[str]] = []

    def run(argv, check):
        commands.append(argv)
        if argv[1:3] == ["-m", "venv"] or argv[1:2] == ["venv"]:
            (Path(argv[-1]) / "bin").mkdir(parents=True)
            (Path(argv[-1]) / "bin" / "python").touch()

    monkeypatch.setattr(venvs.subprocess, "run", run)
    monkeypatch.setattr(venvs, "uv_binary", lambda: uv)
    return commands
