"""Virtual environments the tools run in beside the project's own: the CrossGuard pack's
(policies/requirements.txt), the benchmark's (requirements-loadtest.txt) and the layout
advisor's (requirements-advise.txt)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from core.job_pods import HASHED_INSTALL, is_hash_pinned


def venv_from(
    requirements: Path, venv: Path, python: str = sys.executable, no_deps: bool = False
) -> Path:
    """`venv` holding exactly `requirements`: built when missing, rebuilt when what the file asks
    for changed (a stamp inside the venv remembers the file it was built from), else left as it
    is. A file pinned by hash (every line `name==version --hash=...`, as the benchmark Job ships
    requirements-loadtest.txt) is installed with --require-hashes and nothing resolved. `no_deps`:
    the file lists every package to install, and pip adds none a package declares (for a
    package that declares more than the part of it we run needs)."""
    stamp = venv / ".requirements"
    wanted = requirements.read_text()
    if stamp.exists() and requirement_set(stamp.read_text()) == requirement_set(wanted):
        return venv
    if venv.exists():
        shutil.rmtree(venv)
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "--quiet", "--disable-pip-version-check"]
    options = list(HASHED_INSTALL) if is_hash_pinned(wanted) else []
    if no_deps and "--no-deps" not in options:
        options.append("--no-deps")
    subprocess.run([*pip, "install", *options, "-r", str(requirements)], check=True)
    stamp.write_text(wanted)
    return venv


def requirement_set(text: str) -> set[str]:
    """What a requirements file asks for: its requirement lines without comments or hashes,
    names normalized ('Flask==3.1.3' and 'flask==3.1.3 --hash=sha256:...' ask for the same)."""
    found = set()
    for line in text.splitlines():
        line = re.sub(r"\s--hash=\S+", "", re.sub(r"(^|\s)#.*", "", line)).strip()
        name, pinned, version = line.partition("==")
        if line:
            found.add(
                f"{re.sub(r'[-_.]+', '-', name).lower().strip()}=={version}" if pinned else line
            )
    return found


def foreign_env(**extra: str) -> dict[str, str]:
    """This process's environment for a program of another venv: without our PYTHONPATH and
    VIRTUAL_ENV, which would make it import this venv's packages."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return env | extra
