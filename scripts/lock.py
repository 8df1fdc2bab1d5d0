"""Regenerate every hashed lock of the project from its inputs: `make lock` (`make lock-upgrade`
takes the newest releases the inputs allow; `make lock-check` exits 1 if a committed lock differs).

  python scripts/lock.py [--upgrade] [--check]

Each environment the project creates is installed from a lock that lists every package with the
sha256 of each of its files, so an install gets exactly these files or fails:

| lock (written)              | input (edited by hand)      | the environment                            |
|-----------------------------|-----------------------------|--------------------------------------------|
| requirements-dev.txt        | requirements-dev.in         | .venv of `make` (program, CLI, tests, lint) |
| requirements.txt            | requirements.in             | .venv of `pulumi up` (Pulumi.yaml, pip)    |
| policies/requirements.txt   | policies/requirements.in    | the CrossGuard pack's venv                 |
| requirements-loadtest.txt   | requirements-loadtest.in    | build/loadtest-venv (aiperf, matplotlib)   |
| requirements-advise.txt     | requirements-advise.in      | build/advise-venv (aisimulate, --no-deps)  |
| requirements-scan.txt       | requirements-scan.in        | build/scan-venv (checkov, parliament)      |
| bench/requirements.txt      | bench/requirements.in       | build/bench-venv (`make bench`'s peers)    |
| bench/requirements-crt.txt  | bench/requirements-crt.in   | build/bench-venv-crt (aws-cli with awscrt) |
| requirements-uv.txt         | uv's pin in requirements.in | uv itself, bootstrapped by pip in `make`   |

and, through scripts/lock_job_requirements.py, the in-cluster Jobs' locks (Linux x86_64 wheels of
the Jobs' image only: requirements-job-*.txt).

How: `uv pip compile --universal --generate-hashes` against PyPI (https://pypi.org/simple, any
uv configuration of this machine ignored) for CPython >= 3.11 on every platform, so a lock made on
Linux installs on macOS too. A lock's existing pins are kept unless an input changed them (or
--upgrade). requirements.txt and the pack's lock are constrained to requirements-dev.txt's versions:
what `pulumi up` installs is what the tests ran. The advisor's lock is compiled --no-deps: its input
lists the exact set `predict` needs (requirements-advise.in says why).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a file from any directory, installed or not

INDEX = "https://pypi.org/simple"
PYTHON = "3.11"  # pyproject.toml requires-python >= 3.11: --universal covers every newer one
COMMAND = "make lock"  # what each lock's header says regenerates it


@dataclass(frozen=True)
class Lock:
    out: str
    inputs: tuple[str, ...]
    constrained_by: str | None = None  # another lock whose versions this one must take
    no_deps: bool = False


# In order: a lock named in `constrained_by` is written before the locks it constrains.
LOCKS = (
    Lock("requirements-dev.txt", ("requirements-dev.in",)),
    Lock("requirements.txt", ("requirements.in",), constrained_by="requirements-dev.txt"),
    Lock(
        "policies/requirements.txt",
        ("policies/requirements.in",),
        constrained_by="requirements-dev.txt",
    ),
    Lock("requirements-loadtest.txt", ("requirements-loadtest.in",)),
    Lock("requirements-advise.txt", ("requirements-advise.in",), no_deps=True),
    Lock("requirements-scan.txt", ("requirements-scan.in",)),
    Lock("bench/requirements.txt", ("bench/requirements.in",)),
    Lock("bench/requirements-crt.txt", ("bench/requirements-crt.in",)),
)
UV_LOCK = "requirements-uv.txt"
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==([^\s;\\]+)")


def uv_binary() -> str:
    """The uv of this venv (the `uv` package of requirements.in), else one on PATH."""
    try:
        from uv import find_uv_bin

        return find_uv_bin()
    except ImportError:
        found = shutil.which("uv")
        if not found:
            raise SystemExit("scripts/lock.py needs uv: run it with .venv/bin/python") from None
        return found


def versions(lock_text: str) -> dict[str, str]:
    """Normalized name -> version of each pin of a lock (markers and hashes ignored)."""
    found = {}
    for line in lock_text.splitlines():
        match = _PIN.match(line.strip())
        if match:
            found[re.sub(r"[-_.]+", "-", match[1]).lower()] = match[3]
    return found


def compile_lock(lock: Lock, root: Path, workdir: Path, upgrade: bool) -> str:
    """The text of `lock`, compiled from its inputs under `root` (the committed lock, if any,
    supplies the pins to keep)."""
    out = workdir / lock.out.replace("/", "__")
    if (root / lock.out).exists():
        shutil.copyfile(root / lock.out, out)
    argv = [
        uv_binary(), "pip", "compile", "--quiet", "--no-config", "--universal",
        "--python-version", PYTHON, "--generate-hashes", "--index-url", INDEX,
        "--no-header", "--output-file", str(out),
    ]  # fmt: skip
    if upgrade:
        argv.append("--upgrade")
    if lock.no_deps:
        argv.append("--no-deps")
    if lock.constrained_by:
        argv += ["--constraint", lock.constrained_by]
    # Inputs by their path relative to the root, so `# via -r requirements.in` reads the same on
    # every machine.
    subprocess.run([*argv, *lock.inputs], cwd=root, check=True)
    return header(", ".join(lock.inputs)) + out.read_text()


def header(inputs: str) -> str:
    return (
        f"# Generated by `{COMMAND}` (scripts/lock.py) from {inputs}: do not edit; edit the input\n"
        "# and rerun. Every file of every package is pinned by sha256 (uv pip compile --universal\n"
        f"# --generate-hashes, CPython >= {PYTHON}, any platform).\n"
    )


def compile_uv_lock(root: Path, workdir: Path) -> str:
    """requirements-uv.txt: uv alone (it has no dependencies), at requirements.in's pin."""
    pin = versions((root / "requirements.in").read_text())["uv"]
    (workdir / "uv.in").write_text(f"uv=={pin}\n")
    out = workdir / "uv.txt"
    subprocess.run(
        [
            uv_binary(), "pip", "compile", "--quiet", "--no-config", "--universal",
            "--python-version", PYTHON, "--generate-hashes", "--index-url", INDEX, "--no-deps",
            "--no-annotate", "--no-header", "--output-file", str(out), "uv.in",
        ],
        cwd=workdir, check=True,
    )  # fmt: skip
    return header("uv's pin in requirements.in") + out.read_text()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--upgrade", action="store_true", help="take the newest releases allowed")
    p.add_argument("--check", action="store_true", help="exit 1 if a committed lock differs")
    p.add_argument("--no-jobs", action="store_true", help="leave the Jobs' locks alone")
    args = p.parse_args(argv)
    stale = []
    with tempfile.TemporaryDirectory() as tmp:
        # In --check mode the locks are compiled into a copy of the tree, so a lock constrained by
        # another is judged against what that other lock would be, and nothing is written.
        root = Path(tmp) / "tree" if args.check else ROOT
        if args.check:
            for lock in LOCKS:
                for name in (lock.out, *lock.inputs):
                    (root / name).parent.mkdir(parents=True, exist_ok=True)
                    if (ROOT / name).exists():
                        shutil.copyfile(ROOT / name, root / name)
        work = Path(tmp) / "work"
        work.mkdir()
        results = {}
        for lock in LOCKS:
            results[lock.out] = compile_lock(lock, root, work, args.upgrade)
            (root / lock.out).write_text(results[lock.out])  # later locks read it
            print(f"{'checked' if args.check else 'wrote'} {lock.out}")
        results[UV_LOCK] = compile_uv_lock(root, work)
        for out, text in results.items():
            committed = ROOT / out
            if args.check:
                if not committed.exists() or committed.read_text() != text:
                    stale.append(out)
            else:
                committed.write_text(text)
    if not args.no_jobs:
        from scripts import lock_job_requirements

        if lock_job_requirements.main(["--check"] if args.check else []):
            stale.append("requirements-job-*.txt")
    if stale:
        print(f"out of date (run `{COMMAND}`): {', '.join(stale)}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
