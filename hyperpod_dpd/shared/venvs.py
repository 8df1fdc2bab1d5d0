"""Virtual environments the tools run in beside the project's own: the CrossGuard pack's
(policies/requirements.txt), the benchmark's (requirements-loadtest.txt) and the layout
advisor's (requirements-advise.txt)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path


def venv_from(
    requirements: Path, venv: Path, python: str = sys.executable, no_deps: bool = False
) -> Path:
    """`venv` holding exactly `requirements`: built when missing, rebuilt when the file changed
    (a stamp inside the venv remembers what it was built from), else left as it is. `no_deps`:
    the file lists every package to install, and pip adds none a package declares (for a
    package that declares more than the part of it we run needs)."""
    stamp = venv / ".requirements"
    wanted = requirements.read_text()
    if stamp.exists() and stamp.read_text() == wanted:
        return venv
    if venv.exists():
        shutil.rmtree(venv)
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "--quiet", "--disable-pip-version-check"]
    options = ["--no-deps"] if no_deps else []
    subprocess.run([*pip, "install", *options, "-r", str(requirements)], check=True)
    stamp.write_text(wanted)
    return venv


def foreign_env(**extra: str) -> dict[str, str]:
    """This process's environment for a program of another venv: without our PYTHONPATH and
    VIRTUAL_ENV, which would make it import this venv's packages."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return env | extra
