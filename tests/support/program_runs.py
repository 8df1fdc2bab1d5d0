"""Program runs shared by a test session: its parallel workers, the pytest a test starts
(shared_runs_env) and the CLI processes a test starts (tests/support/cli_sharing_runs.py) all run a
config once and read each other's runs, each kept with the stacks it handed `parse_settings`
(tests/fix_hints/handed_stacks.py): read back, a run hands them again, for the fix-hint
recorder. No pytest here: a process a test starts imports this without it.

The runs are kept across sessions too (`kept_runs_directory`): a run is a function of its config
(its key) and of what runs it: the program and every module it imports, the stack files and data
it reads, the checks a kept run has passed (tests/cfn/), the Python and the packages installed.
A session of a checkout in which none of those changed reads the runs an earlier one made; a
change to any of them (a new file too) starts from none. Editing a test alone keeps them.
`rm -r build/test-cache` forgets them.
"""

from __future__ import annotations

import contextlib
import copy
import fcntl
import functools
import hashlib
import importlib.metadata
import json
import os
import pickle
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tests.fix_hints import handed_stacks

# Where the session's runs are kept (set by tests/conftest.py's session fixture, or from
# SHARED_RUNS_ENV in a process a test started); None: nothing is shared.
SHARED_RUNS: Path | None = None
# A pytest or a CLI process started by a test shares its program runs with the session that
# started it: the directory, handed down in this variable.
SHARED_RUNS_ENV = "HYPERPOD_DPD_TEST_PROGRAM_RUNS"


# What of tests/ a kept run depends on: the code that makes and keeps runs (run_stack in
# tests/conftest.py, this package, the fix-hint recorder's stacks kept with each run) and the
# AWS rules every kept run has passed (tests/cfn/). The rest of tests/ only reads runs.
RUN_MAKING_TESTS = ("tests/conftest.py", "tests/support/", "tests/cfn/", "tests/fix_hints/")


def checkout_digest(
    root: Path, leave_out: Callable[[str], bool] = lambda _name: False
) -> str | None:
    """The SHA-256 of every file of the checkout at `root` that git sees (tracked, and new ones
    it does not ignore), by path and content, but those `leave_out` names; None outside a git
    checkout."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=root, capture_output=True, check=False)  # fmt: skip
    if listed.returncode != 0:
        return None
    digest = hashlib.sha256()
    for name in sorted(n for n in listed.stdout.split(b"\0") if n):
        path = root / os.fsdecode(name)
        if path.is_file() and not leave_out(os.fsdecode(name)):  # not one deleted since listed
            digest.update(name + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


@functools.cache
def this_environment() -> str:
    """This Python and every distribution installed in it, by version."""
    installed = sorted(
        f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions()
    )
    return json.dumps([sys.version, installed])


def _only_reads_runs(name: str) -> bool:
    return name.startswith("tests/") and not name.startswith(RUN_MAKING_TESTS)


def kept_runs_directory(root: Path) -> Path | None:
    """build/test-cache/program-runs/<what makes a run>/ of the checkout at `root` (created;
    the directories of other states of the checkout removed); None outside a git checkout."""
    here = _directory_of_this_state(root)
    if here is None:
        return None
    here.mkdir(parents=True, exist_ok=True)
    for other in here.parent.iterdir():
        if other != here:
            shutil.rmtree(other, ignore_errors=True)
    return here


def forget_if_changed(directory: Path, root: Path) -> None:
    """At the end of a session: if the checkout changed while it ran (a file saved mid-run),
    its runs may come from code of either state, under the name of the first: none is kept."""
    if _directory_of_this_state(root) != directory:
        shutil.rmtree(directory, ignore_errors=True)


def _directory_of_this_state(root: Path) -> Path | None:
    digest = checkout_digest(root, leave_out=_only_reads_runs)
    if digest is None:
        return None
    name = hashlib.sha256(f"{digest}\0{this_environment()}".encode()).hexdigest()[:32]
    return root / "build" / "test-cache" / "program-runs" / name


def shared_runs_env() -> dict[str, str]:
    """The environment for a process a test starts, to share this session's program runs."""
    return {SHARED_RUNS_ENV: str(SHARED_RUNS)} if SHARED_RUNS else {}


@contextlib.contextmanager
def exclusive(lock_path: Path) -> Iterator[None]:
    """Hold the lock file `lock_path` (created if missing): the parallel test workers take turns
    at what it guards (a venv being built, a shared program run)."""
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def write_whole(path: Path, data: bytes) -> None:
    """Write `path` aside, then rename it into place: a reader (another worker, a later session)
    finds the whole file or none, never half of one."""
    partial = path.with_suffix(f".{os.getpid()}.partial")
    partial.write_bytes(data)
    partial.replace(path)


# AWS_ and KUBE*: read by the providers' SDKs. PULUMI_CONFIG (and its _SECRET_KEYS): config the
# SDK takes from the environment (pulumi/runtime/config.py get_config_env), which the program
# reads beside the engine's (program/stack_config.py).
PROVIDER_VARIABLES = ("AWS_", "KUBE", "PULUMI_CONFIG")


def provider_environment() -> tuple[tuple[str, str], ...]:
    """The variables the providers' SDKs read into their inputs (pulumi_aws_native's Provider
    takes sharedCredentialsFile from AWS_SHARED_CREDENTIALS_FILE): part of what a run depends
    on, so a run made while a test had them set is not reused by one that has not."""
    return tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith(PROVIDER_VARIABLES)))


def aws_accepts(run, config: dict[str, str], preview: bool):
    """`run`, once every AWS input it registered passed AWS's own rules (tests/cfn/: the
    CloudFormation schemas cfn-lint ships and the rules no schema has), and every AWS type it
    registered is mapped to be judged: so every stack a test builds is judged, not only the
    shipped ones. The test that builds a stack AWS would refuse fails, naming the findings."""
    from tests.cfn.check import check_run

    region = config.get("aws:region") or "us-east-1"  # the engine's default (offline/engine.py)
    findings = check_run(run, region, preview=preview)
    if findings:
        listed = "\n  ".join(str(f) for f in findings)
        raise AssertionError(f"AWS would refuse inputs this stack registers:\n  {listed}")
    return run


def shared_run(key: tuple, run):
    """`run()`, once across the parallel workers (and the processes a test starts with
    shared_runs_env()) and the sessions of one state of the checkout: the first worker to need
    a config runs it and leaves the result where they all look (`kept_runs_directory`; outside
    a git checkout, pytest's base temporary directory of the session); the others wait on the
    file's lock and read it. The stacks the run handed parse_settings are kept with it and
    handed again where it is read."""
    if SHARED_RUNS is None:
        return run()
    SHARED_RUNS.mkdir(parents=True, exist_ok=True)  # removed by a session of another state
    path = SHARED_RUNS / hashlib.sha256(repr(key).encode()).hexdigest()
    with exclusive(path.with_suffix(".lock")):
        if path.exists():
            result, calls = pickle.loads(path.read_bytes())
            handed_stacks.replay(calls)
            return result
        result, calls = handed_stacks.during(run)
        write_whole(path, pickle.dumps((result, calls)))
        return result


_PLAN_RUNS: dict[tuple, Any] = {}


def plan_run(
    program, config, secret_keys, *, project, stack, recorded=None, preview=False, handed=None
):
    """hyperpod_dpd.plan.engine.run_program as `make_plan` calls it, the run kept: within the
    suite, the same program and config give the same run, so it is made once per session and
    each plan gets a copy."""
    from hyperpod_dpd.plan.engine import run_program

    key = (
        Path(program).read_text(),
        json.dumps(config, sort_keys=True),
        tuple(secret_keys),
        project,
        stack,
        preview,
        provider_environment(),
    )

    def run():
        # A run that stops (a mandatory violation) raises before it is kept, with `recorded`
        # filled in as it happened: the plan still counts what it registered.
        done = run_program(
            program,
            config,
            secret_keys,
            project=project,
            stack=stack,
            recorded=recorded,
            preview=preview,
            handed=handed,
        )
        return aws_accepts(done, config, preview)

    # Once per session, across the workers too.
    return copy.deepcopy(
        handed_stacks.kept(_PLAN_RUNS, key, lambda: shared_run(("plan", *key), run))
    )
