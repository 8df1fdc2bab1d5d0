"""Both in-cluster Jobs install nothing that is not pinned by hash: every pip command of their
scripts has --require-hashes and names no package, and every requirements file it installs is
shipped in the Job's ConfigMap with only `name==version --hash=sha256:...` lines. aiperf's venv,
which the benchmark Job's program builds, is installed the same way."""

from __future__ import annotations

import re
import shlex

import pytest

from core.job_pods import HASHED_INSTALL, is_hash_pinned, unhashed_lines
from core.versions import JOB_BOTO3
from hyperpod_dpd.benchmark import job as benchmark
from hyperpod_dpd.shared import venvs
from settings import parse_settings
from specs import staging
from tests.conftest import ROOT, stack_raw
from tests.support.venv_builds import recorded_builds

SHA = "--hash=sha256:" + "0" * 64


def pip_problems(script: str, shipped: dict[str, str]) -> list[str]:
    """What is wrong with the pip installs of a Job's shell `script`; `shipped` maps a path in
    the container to the text of the file there."""
    installs = [c for c in re.split(r"&&|\|\||;", script) if re.search(r"\bpip3?\s+install\b", c)]
    if not installs:
        return ["no pip install"]
    problems = []
    for command in installs:
        argv = shlex.split(command)
        args = argv[argv.index("install") + 1 :]
        files = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-r", "--requirement")]
        if "--require-hashes" not in args:
            problems.append(f"no --require-hashes: {command.strip()}")
        if named := [a for a in args if not a.startswith("-") and a not in files]:
            problems.append(f"installs by name {named}: {command.strip()}")
        for path in files:
            if path not in shipped:
                problems.append(f"{path}: not shipped in the Job's ConfigMap")
            elif not is_hash_pinned(shipped[path]):
                problems.append(f"{path}: unhashed or unpinned {unhashed_lines(shipped[path])}")
    return problems


def _staging():
    spec = staging.staging(
        "checkpoint", parse_settings(stack_raw("dev")), "${b.bucket}", "${b.arn}", None
    )
    (container,) = spec.job.props["spec"]["template"]["spec"]["containers"]
    shipped = {f"{staging.CODE_DIR}/{k}": v for k, v in spec.code.props["data"].items()}
    return container["command"][2], shipped


def _benchmark():
    from tests.hyperpod_dpd.benchmark.job_factory import _run

    run, files = _run(), benchmark.code_files()
    (container,) = benchmark.job(run, files)["spec"]["template"]["spec"]["containers"]
    # The volume's items lay each shipped file at its path under CODE_DIR, copied to APP_DIR.
    shipped = {
        f"{d}/{p}": t for p, t in files.items() for d in (benchmark.CODE_DIR, benchmark.APP_DIR)
    }
    return container["command"][2], shipped


@pytest.mark.parametrize("job", [_staging, _benchmark], ids=["staging", "benchmark"])
def test_every_pip_install_of_a_job_is_pinned_by_hash(job):
    script, shipped = job()
    assert pip_problems(script, shipped) == []


@pytest.mark.parametrize(
    ("script", "files", "problem"),
    [
        ("pip install --user 'boto3[crt]==1.44.8' && exec python", {}, "no --require-hashes"),
        ("pip install --require-hashes --no-deps boto3==1 -r /r", {"/r": f"a==1 {SHA}"}, "by name"),
        ("pip install --require-hashes -r /r", {"/r": f"boto3==1 {SHA}\nawscrt==0.3\n"}, "awscrt"),
        ("pip install --require-hashes -r /r", {"/r": f"boto3>=1 {SHA}\n"}, "unpinned"),
        ("pip install --require-hashes -r /r", {"/r": f"a==1 {SHA}\n-r other.txt\n"}, "other"),
        ("pip install --require-hashes -r /r", {"/r": "a==1 --hash=md5:" + "0" * 32}, "md5"),
        ("pip install --require-hashes -r /r", {"/r": "# only a comment\n"}, "unpinned"),
        ("pip install --require-hashes -r /missing", {}, "not shipped"),
        ("exec python -m checkpoint", {}, "no pip install"),
    ],
)
def test_an_install_not_pinned_by_hash_is_caught(script, files, problem):
    assert any(problem in p for p in pip_problems(script, files))


def test_aiperf_venv_in_the_benchmark_job_is_installed_by_hash(tmp_path, monkeypatch):
    shipped = benchmark.code_files()["requirements-loadtest.txt"]
    assert is_hash_pinned(shipped), unhashed_lines(shipped)
    # The same versions as a laptop's venv on this platform: a venv built from either is the venv
    # of the other (the tests' fake pod reuses build/loadtest-venv), and each version is hashed.
    laptop = (ROOT / "requirements-loadtest.txt").read_text()
    assert is_hash_pinned(laptop), unhashed_lines(laptop)
    assert venvs.requirement_set(shipped) == venvs.requirement_set(laptop)
    # The Job's image has no uv: pip, every file checked against its hash, nothing resolved.
    commands = recorded_builds(monkeypatch, uv=None)
    (tmp_path / "job.txt").write_text(shipped)
    venvs.venv_from(tmp_path / "job.txt", tmp_path / "job-venv")
    (install,) = [c for c in commands if "install" in c]
    assert install[install.index("install") + 1 :] == [
        *HASHED_INSTALL,
        "-r",
        str(tmp_path / "job.txt"),
    ]
    # A laptop syncs its universal lock with uv: exactly the lock, by hash.
    commands = recorded_builds(monkeypatch, uv="/x/uv")
    (tmp_path / "laptop.txt").write_text(laptop)
    venvs.venv_from(tmp_path / "laptop.txt", tmp_path / "laptop-venv")
    (sync,) = [c for c in commands if "sync" in c]
    assert sync[:5] == ["/x/uv", "pip", "sync", "--quiet", "--require-hashes"]
    assert sync[-1] == str(tmp_path / "laptop.txt")
    # Built from one, the venv is left as it is for the other; another version rebuilds it.
    commands.clear()
    venvs.venv_from(tmp_path / "job.txt", tmp_path / "laptop-venv")
    assert commands == []
    (tmp_path / "job.txt").write_text(shipped.replace("\naiperf==0.13.0 ", "\naiperf==0.13.1 "))
    venvs.venv_from(tmp_path / "job.txt", tmp_path / "laptop-venv")
    assert commands


def test_a_requirements_file_that_is_not_a_lock_builds_no_venv(tmp_path, monkeypatch):
    commands = recorded_builds(monkeypatch, uv="/x/uv")
    (tmp_path / "loose.txt").write_text(f"aiperf==0.13.0 {SHA}\nmatplotlib>=3\n")
    with pytest.raises(ValueError, match=r"matplotlib>=3.*make lock"):
        venvs.venv_from(tmp_path / "loose.txt", tmp_path / "venv")
    assert commands == []
    assert not (tmp_path / "venv").exists()


def test_a_universal_locks_markers_are_judged_on_this_machine():
    lock = (
        f"a==1 \\\n    {SHA}\n"
        f"b==2 ; sys_platform == 'win32' \\\n    {SHA} \\\n    {SHA}\n"
        f"c==3 ; python_full_version >= '3.11' {SHA}\n"
    )
    assert is_hash_pinned(lock), unhashed_lines(lock)
    assert venvs.requirement_set(lock) == {"a==1", "c==3"}


def test_the_locks_hold_the_jobs_pins():
    locked = venvs.requirement_set((ROOT / benchmark.BOTO3_REQUIREMENTS).read_text())
    name, version = JOB_BOTO3.split("==")
    assert f"{name.split('[')[0]}=={version}" in locked
    assert any(p.startswith("awscrt==") for p in locked)  # boto3's [crt] extra, with --no-deps
    # Every lock says how it was made and is what the generator writes (its header names it).
    for lock in ROOT.glob("requirements-job-*.txt"):
        assert "scripts/lock_job_requirements.py" in lock.read_text().splitlines()[0]


def test_the_advise_venv_is_byte_compiled_as_it_is_installed(tmp_path, monkeypatch):
    """The simulator runs with PYTHONDONTWRITEBYTECODE (hyperpod_dpd/advise/engine.py): a venv
    installed without its bytecode would compile pandas, pyarrow and aisimulate at every start."""
    from hyperpod_dpd.advise.engine import REQUIREMENTS, advise_venv

    commands = recorded_builds(monkeypatch, uv="/x/uv")
    advise_venv(tmp_path / "advise-venv", REQUIREMENTS)
    (sync,) = [c for c in commands if "sync" in c]
    assert "--compile-bytecode" in sync
    # Venvs whose programs write their own bytecode are installed without it (uv's default).
    commands.clear()
    (tmp_path / "laptop.txt").write_text((ROOT / "requirements-loadtest.txt").read_text())
    venvs.venv_from(tmp_path / "laptop.txt", tmp_path / "laptop-venv")
    (sync,) = [c for c in commands if "sync" in c]
    assert "--compile-bytecode" not in sync
