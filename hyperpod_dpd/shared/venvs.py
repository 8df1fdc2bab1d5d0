"""Virtual environments the tools run in beside the project's own: the CrossGuard pack's
(policies/requirements.txt), the benchmark's (requirements-loadtest.txt) and the layout
advisor's (requirements-advise.txt)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from core.job_pods import HASHED_INSTALL, is_hash_pinned, requirement_lines, unhashed_lines

# Inside each venv, how it was built: the packages it holds (`requirement_set`: the benchmark
# Job's lock and a laptop's universal one ask for the same venv), the interpreter's
# implementation and minor version (a lock's wheels differ by both: pyarrow's cp311 is not its
# cp312), and whether its modules were byte-compiled. Before it a `.requirements` stamp held the
# file's text alone: a venv with that one and none of this is rebuilt once.
STAMP = ".built-as.json"


def venv_from(
    requirements: Path, venv: Path, python: str = sys.executable, compiled: bool = False
) -> Path:
    """`venv` holding exactly `requirements`, a lock that pins every package by hash: built when
    missing, rebuilt when it was built otherwise (a stamp inside the venv remembers how: see
    `_stale`), else left as it is. Nothing is resolved: `uv pip sync` installs the listed
    packages alone (uv, from requirements.in, on a laptop and in `make`), else pip with
    --require-hashes --no-deps (the benchmark Job's image, which has no uv). Each (re)build is
    announced on stderr with its reason: it takes a minute or more.

    `compiled`: every module byte-compiled as it is installed (pip always does; uv only when
    asked), for a venv whose programs run with PYTHONDONTWRITEBYTECODE: without it each of their
    starts compiles every module it imports again."""
    wanted = requirements.read_text()
    stamp = venv / STAMP
    asked = {
        "requirements": sorted(requirement_set(wanted)),
        "python": interpreter(python),
        "bytecode": compiled,
    }
    why = _stale(venv, asked)
    if why is None:
        return venv
    if not is_hash_pinned(wanted):
        raise ValueError(
            f"{requirements}: not a lock (a line without --hash: {unhashed_lines(wanted)[:1]}); "
            "regenerate it with `make lock`"
        )
    if venv.is_symlink():  # another checkout's venv, shared: rebuilt there, not emptied here
        raise ValueError(
            f"{venv} is a link to {os.readlink(venv)} ({why}): rebuild it there, or "
            f"`rm {venv}` to build one here"
        )
    print(f"building {venv} from {requirements.name}: {why} (a minute or more)", file=sys.stderr)
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
        asked["bytecode"] = True  # pip compiles what it installs unless told not to
    stamp.write_text(json.dumps(asked, indent=1))
    # The stamp of checkouts from before STAMP: one of those sharing this venv keeps it as is.
    (venv / ".requirements").write_text(wanted)
    return venv


def _stale(venv: Path, asked: dict[str, Any]) -> str | None:
    """Why `venv` is not what `asked` builds, or None when it is. A venv with bytecode serves a
    caller that does not ask for it (the extra files are harmless, and two such callers of one
    venv would otherwise rebuild it in turn)."""
    if not venv.exists():
        return "it does not exist yet"
    try:
        built = json.loads((venv / STAMP).read_text())
    except (OSError, ValueError):
        built = None
    if not isinstance(built, dict) or set(built) != set(asked):
        return "it has no record of how it was built (or an older one)"
    if built["requirements"] != asked["requirements"]:
        return "the requirements changed"
    if built["python"] != asked["python"]:
        return f"it was built for {built['python']}, not {asked['python']}"
    if asked["bytecode"] and not built["bytecode"]:
        return "it was built without bytecode"
    if not (venv / "bin" / "python").exists():
        return "its interpreter is gone"
    return None


def interpreter(python: str) -> str:
    """`python`'s implementation and minor version ('cpython-3.11'), asked of it unless it is
    the interpreter running this."""
    if python == sys.executable:
        name, version = sys.implementation.name, sys.version_info
    else:
        code = "import sys; print(sys.implementation.name, *sys.version_info)"
        out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
        name, *version = out.stdout.split()
    return f"{name}-{version[0]}.{version[1]}"


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
