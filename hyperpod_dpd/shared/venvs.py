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

from core.job_pods import HASHED_INSTALL, is_hash_pinned, requirement_lines, unhashed_lines


def venv_from(
    requirements: Path, venv: Path, python: str = sys.executable, compiled: bool = False
) -> Path:
    """`venv` holding exactly `requirements`, a lock that pins every package by hash: built when
    missing, rebuilt when what the file asks for changed (a stamp inside the venv remembers the
    file it was built from), else left as it is. Nothing is resolved: `uv pip sync` installs the
    listed packages alone (uv, from requirements.in, on a laptop and in `make`), else pip with
    --require-hashes --no-deps (the benchmark Job's image, which has no uv).

    `compiled`: every module byte-compiled as it is installed (pip always does; uv only when
    asked), for a venv whose programs run with PYTHONDONTWRITEBYTECODE: without it each of their
    starts compiles every module it imports again."""
    stamp = venv / ".requirements"
    wanted = requirements.read_text()
    if stamp.exists() and requirement_set(stamp.read_text()) == requirement_set(wanted):
        return venv
    if not is_hash_pinned(wanted):
        raise ValueError(
            f"{requirements}: not a lock (a line without --hash: {unhashed_lines(wanted)[:1]}); "
            "regenerate it with `make lock`"
        )
    if venv.exists():
        shutil.rmtree(venv)
    uv = uv_binary()
    if uv:
        subprocess.run([uv, "venv", "--quiet", "--python", python, str(venv)], check=True)
        sync = [uv, "pip", "sync", "--quiet", "--require-hashes"]
        sync += ["--compile-bytecode"] if compiled else []
        target = ["--python", str(venv / "bin" / "python")]
        subprocess.run([*sync, *target, str(requirements)], check=True)
    else:
        subprocess.run([python, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "--quiet", "--disable-pip-version-check"]
        subprocess.run([*pip, "install", *HASHED_INSTALL, "-r", str(requirements)], check=True)
    stamp.write_text(wanted)
    return venv


def uv_binary() -> str | None:
    """The uv beside this Python (the `uv` package of requirements.in), or None where there is
    none (the benchmark Job's image)."""
    try:
        from uv import find_uv_bin
    except ImportError:
        return None
    try:
        return find_uv_bin()
    except FileNotFoundError:
        return None


def requirement_set(text: str) -> set[str]:
    """What a requirements file asks for on this machine: `name==version` of each requirement,
    names normalized, hashes dropped, and those whose environment marker this machine does not
    meet left out ('Flask==3.1.3', 'flask==3.1.3 --hash=sha256:...' and a universal lock's
    'flask==3.1.3 ; python_full_version >= "3.11" --hash=...' ask for the same)."""
    found = set()
    for line in requirement_lines(text):
        line = re.sub(r"\s--hash=\S+", "", line).strip()
        line, _, marker = (part.strip() for part in line.partition(";"))
        if marker and not _marker_holds(marker):
            continue
        name, pinned, version = line.partition("==")
        found.add(f"{re.sub(r'[-_.]+', '-', name).lower().strip()}=={version}" if pinned else line)
    return found


def _marker_holds(marker: str) -> bool:
    # Imported only for a file with markers: the benchmark Job's locks have none, and its image's
    # Python has no `packaging` outside pip.
    from packaging.markers import Marker

    return Marker(marker).evaluate()


def foreign_env(**extra: str) -> dict[str, str]:
    """This process's environment for a program of another venv: without our PYTHONPATH and
    VIRTUAL_ENV, which would make it import this venv's packages."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return env | extra
