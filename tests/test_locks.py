"""Every environment the project creates is installed from a lock that pins every file by hash,
the lock holds what its input asks for, and what is installed is the lock: nothing `make test`
checks depends on what PyPI serves newest on the day. Offline: the locks are read, never
resolved again (`make lock-check` does that, with the network)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from core.aws import aws_facts, ec2_instances
from core.job_pods import is_hash_pinned, requirement_lines, unhashed_lines
from core.versions import WORKER_VLLM_VERSION
from core.vllm import vllm_flags
from hyperpod_dpd.shared.venvs import requirement_set
from scripts.lock import LOCKS, UV_LOCK, versions
from tests.conftest import ROOT

ALL_LOCKS = (
    [lock.out for lock in LOCKS]
    + [UV_LOCK]
    + sorted(p.name for p in ROOT.glob("requirements-job-*.txt"))
)
# Where `make test` builds each tool's venv (Makefile) from which lock.
BUILT_VENVS = {
    "build/policy-pack/venv": "policies/requirements.txt",
    "build/loadtest-venv": "requirements-loadtest.txt",
    "build/advise-venv": "requirements-advise.txt",
    "build/scan-venv": "requirements-scan.txt",
}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _input_requirements(path: Path) -> list[Requirement]:
    """The requirements of an input file, following its `-r` lines."""
    found = []
    for line in requirement_lines(path.read_text()):
        if line.startswith("-r "):
            found += _input_requirements(path.parent / line.split(None, 1)[1])
        else:
            found.append(Requirement(line))
    return found


@pytest.mark.parametrize("lock", ALL_LOCKS)
def test_every_lock_pins_every_package_by_hash(lock):
    text = (ROOT / lock).read_text()
    assert is_hash_pinned(text), unhashed_lines(text)[:3]


@pytest.mark.parametrize("lock", LOCKS, ids=lambda lock: lock.out)
def test_each_lock_holds_what_its_input_asks_for(lock):
    """An input edited without `make lock` fails here: a new package is missing from the lock,
    a changed pin does not match it."""
    pinned = versions((ROOT / lock.out).read_text())
    for path in lock.inputs:
        for req in _input_requirements(ROOT / path):
            got = pinned.get(_norm(req.name))
            assert got is not None, f"{path}: {req.name} is not in {lock.out}; run `make lock`"
            assert req.specifier.contains(got, prereleases=True), (
                f"{path} asks for {req}, {lock.out} pins {got}; run `make lock`"
            )


@pytest.mark.parametrize("lock", [lock for lock in LOCKS if lock.constrained_by])
def test_pulumi_up_installs_the_versions_the_tests_ran(lock):
    """requirements.txt (what `pulumi up` installs) and the pack's lock take the versions of
    requirements-dev.txt (what `make test` installs) for every package they share."""
    mine = versions((ROOT / lock.out).read_text())
    tested = versions((ROOT / lock.constrained_by).read_text())
    differ = {n: (v, tested.get(n)) for n, v in mine.items() if tested.get(n) != v}
    assert not differ, f"{lock.out} vs {lock.constrained_by}: {differ}"


def test_the_uv_that_installs_is_the_locked_one():
    assert versions((ROOT / UV_LOCK).read_text()) == {
        "uv": versions((ROOT / "requirements.txt").read_text())["uv"]
    }


def _installed(python: Path | str) -> set[str]:
    """`name==version` of every distribution a Python sees in its environment."""
    program = (
        "import importlib.metadata as m, json; "
        "print(json.dumps(sorted({(d.metadata['Name'], d.version) for d in m.distributions()})))"
    )
    out = subprocess.run(
        [str(python), "-I", "-c", program], capture_output=True, text=True, check=True
    ).stdout
    return {f"{_norm(name)}=={version}" for name, version in json.loads(out)}


def test_the_project_venv_is_its_lock():
    """.venv (where this test runs) holds requirements-dev.txt, nothing more or less, and the
    project itself."""
    wanted = requirement_set((ROOT / "requirements-dev.txt").read_text())
    wanted.add(f"hyperpod-dpd=={metadata.version('hyperpod-dpd')}")
    installed = _installed(sys.executable)
    assert installed == wanted, {"extra": installed - wanted, "missing": wanted - installed}


@pytest.mark.parametrize("venv", sorted(BUILT_VENVS))
def test_each_tool_venv_is_its_lock(venv):
    """The policy pack's, the load generator's and the advisor's venvs, as `make test` built
    them (`make policy-pack loadtest-venv advise-venv`), hold exactly their locks."""
    python = ROOT / venv / "bin" / "python"
    assert python.exists(), f"{venv} is missing: `make test` builds it before the suite"
    wanted = requirement_set((ROOT / BUILT_VENVS[venv]).read_text())
    installed = _installed(python)
    assert installed == wanted, {"extra": installed - wanted, "missing": wanted - installed}


def test_generated_facts_are_of_the_locked_versions():
    """core/aws/aws_facts.py and core/aws/ec2_instances.py are generated from the botocore and moto the
    lock installs (scripts/extract_aws_facts.py), core/vllm/vllm_flags.json from the workers' vLLM: a
    lock that moves one without regenerating the facts fails here."""
    locked = versions((ROOT / "requirements-dev.txt").read_text())
    assert locked["botocore"] == aws_facts.BOTOCORE_VERSION
    assert locked["moto"] == ec2_instances.MOTO_VERSION
    assert vllm_flags.vllm_version() == WORKER_VLLM_VERSION
