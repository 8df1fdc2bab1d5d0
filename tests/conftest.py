"""Shared helpers: the repo's stack files as plain data, edited one key at a time."""

from __future__ import annotations

import copy
import functools
import gc
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from settings.yaml_files import safe_load
from tests.fix_hints import handed_stacks, recorder
from tests.fix_hints.recorded_tests import audits
from tests.support import program_runs
from tests.support.program_runs import (
    SHARED_RUNS_ENV,
    aws_accepts,
    plan_run,
    provider_environment,
    shared_run,
)
from tests.support.quiet_output import pytest_runtest_makereport  # noqa: F401 (a hook: noise fails a test)

ROOT = Path(__file__).resolve().parents[1]
# The suite keeps a large, long-lived heap (the SDKs' classes, program runs kept for reuse):
# the cyclic collector's full passes would rescan it again and again for nothing. Collections
# of the young generation still run; the old ones run rarely.
gc.set_threshold(100_000, 50, 1000)
_MISSING = object()


def pytest_collection_modifyitems(items):
    """Tests marked `long` first (stable otherwise): xdist hands tests out in this order, and a
    long test handed out last keeps one core busy while the other has nothing left to do. The
    fix-hint audit's tests last of all: they read what the recorded tests of their xdist group
    recorded (tests/fix_hints/recorded_tests.py), and pytest-xdist runs a group in this order."""
    items.sort(key=lambda item: (audits(item), item.get_closest_marker("long") is None))


def pytest_configure(config):
    """SIGINT at Python's own handler in every process of the suite, as at a terminal. A suite
    started in the background by a non-interactive shell (`make test &` in a script, nohup)
    inherits SIGINT ignored (POSIX, asynchronous lists); every command a test starts would
    inherit it too, and a Python started so installs no KeyboardInterrupt handler: the Ctrl-C
    tests would judge a process no user's Ctrl-C ever reaches. A handled signal is back at its
    default in a child (exec), where Python installs its handler."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    # The stacks the fix-hint audit replays, recorded as the tests run (`-p` may name it too).
    if not config.pluginmanager.has_plugin(recorder.__name__):
        config.pluginmanager.register(recorder, recorder.__name__)


def pytest_xdist_auto_num_workers(config):
    """`-n auto` (pyproject.toml's addopts): one worker more than the cores this process may
    use. Some of the suite's longest tests mostly wait (the resume soak's throttled uploads,
    a Prometheus' scrapes, the load generator's runs): with a worker per core, each such wait
    leaves a core idle. With one more, the suite took 147 s instead of 162 s on 2 cores (`make
    bench`'s suite part measures it). PYTEST_XDIST_AUTO_NUM_WORKERS still decides when set."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # pytest-xdist's own hook reads it
    usable = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None  # not macOS
    return (len(usable) if usable else os.cpu_count() or 1) + 1


def pytest_runtest_setup(item):
    """Tests marked `xdist_group` (the load generators) must share one worker: a pytest-xdist
    that no longer groups them (pytest-dev/pytest-xdist#1386, with pytest 9.2) would let two
    measure each other, silently. Such a test fails here instead, naming the cause."""
    grouping = getattr(item.config.option, "loadgroup", False)
    if grouping and item.get_closest_marker("xdist_group") and "@" not in item.nodeid:
        pytest.fail(
            "--dist loadgroup is not grouping this xdist_group test: this pytest-xdist does "
            "not work with this pytest (pytest-dev/pytest-xdist#1386); use the versions "
            "requirements-dev.txt pins",
            pytrace=False,
        )


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    """An xdist worker ends here, as the console script does (hyperpod_dpd/cli/__init__.py): its results
    went to the controller at session finish, and tearing its heap down (the SDKs' classes,
    the shared program runs) object by object costs the controller seconds of waiting."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


def stack_raw(stack: str = "dev") -> dict[str, Any]:
    """The `config:` map of Pulumi.<stack>.yaml (full keys -> decoded values), a fresh copy
    each time (tests edit it)."""
    return copy.deepcopy(_stack_config(stack))


@functools.cache
def _stack_config(stack: str) -> dict[str, Any]:
    return safe_load((ROOT / f"Pulumi.{stack}.yaml").read_text())["config"]


def edit(raw: dict[str, Any], path: str, value: Any = _MISSING) -> dict[str, Any]:
    """Set (or, without a value, delete) 'hyperpod-dpd:endpoint.prefill.replicas' in `raw`."""
    key, *rest = path.split(".")
    if not rest:
        if value is _MISSING:
            raw.pop(key, None)
        else:
            raw[key] = value
        return raw
    node = raw[key]
    for part in rest[:-1]:
        node = node.setdefault(part, {})
    if value is _MISSING:
        node.pop(rest[-1], None)
    else:
        node[rest[-1]] = value
    return raw


def as_pulumi_config(raw: dict[str, Any]) -> dict[str, str]:
    """What the Pulumi CLI hands the program: text, objects as JSON."""
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in raw.items()}


@pytest.fixture
def dev_raw() -> dict[str, Any]:
    return stack_raw("dev")


def canary_raw() -> dict[str, Any]:
    """Pulumi.canary.yaml: a colocated baseline and a DPD candidate at 95/5."""
    return stack_raw("canary")


def with_cache(raw: dict[str, Any], key: str = "candidate", **cache: bool) -> dict[str, Any]:
    """`raw` with endpoints.<key>.cache set to `cache` (weights, image)."""
    return edit(raw, f"hyperpod-dpd:endpoints.{key}.cache", cache)


# A commit of meta-llama/Llama-3.3-70B-Instruct other than the stacks' (the candidate's upgrade).
NEW_REVISION = "0cc4e1a3d1c1e1f2a3b4c5d6e7f8091a2b3c4d5e"


def canary_revision_raw() -> dict[str, Any]:
    """The canary stack whose candidate serves a new revision of the model beside the
    baseline's: endpoints.candidate.checkpoint.revision set, a second copy staged."""
    raw = canary_raw()
    raw["hyperpod-dpd:endpoints"]["candidate"]["checkpoint"] = {"revision": NEW_REVISION}
    return raw


def split_of(count: int) -> dict[str, Any]:
    """The canary stack with `count` endpoints behind its split: the baseline, the candidate and
    more colocated copies of the baseline (`colocated-2`, ...) at weight 0, each with room."""
    raw = canary_raw()
    endpoints = raw["hyperpod-dpd:endpoints"]
    for i in range(2, count):
        endpoints[f"colocated-{i}"] = dict(endpoints["baseline"])
    colocated = raw["hyperpod-dpd:instanceGroups"]["colocated"]
    colocated["instanceCount"] *= len(endpoints) - 1  # each copy at the baseline's replicas
    raw["hyperpod-dpd:traffic"] = {key: 0 for key in endpoints} | {"baseline": 95, "candidate": 5}
    return raw


_RUNS: dict[tuple, Any] = {}


@pytest.fixture(scope="session", autouse=True)
def _share_runs_between_workers(tmp_path_factory, worker_id):
    kept = None
    if os.environ.get(SHARED_RUNS_ENV):
        shared = Path(os.environ[SHARED_RUNS_ENV])
    elif kept := program_runs.kept_runs_directory(ROOT):  # across sessions
        shared = kept
    elif worker_id != "master":
        # Every xdist worker's base temp is a child of one directory per session.
        shared = tmp_path_factory.getbasetemp().parent / "program-runs"
    else:
        shared = tmp_path_factory.getbasetemp() / "program-runs"
    shared.mkdir(exist_ok=True)
    program_runs.SHARED_RUNS = shared
    yield
    if kept is not None:
        program_runs.forget_if_changed(kept, ROOT)


def run_stack(
    raw: dict[str, Any],
    secret_keys: list[str] | None = None,
    stack: str = "dev",
    preview: bool = False,
    fresh: bool = False,
):
    """Run the real __main__.py under the mock engine with `raw` as the stack config
    (`preview`: as the first `pulumi preview` of a new stack; `fresh`: run it even if this
    config ran before, for tests that watch the engine).

    A run is a pure function of its config: the same config is run once per test session and
    every caller gets its own deep copy (tests may change what they get). A run that raises is
    not kept, so each caller meets the error."""
    from hyperpod_dpd.plan.engine import run_program

    key = (
        json.dumps(raw, sort_keys=True),
        tuple(secret_keys or ()),
        stack,
        preview,
        provider_environment(),
    )

    def run():
        config = as_pulumi_config(raw)
        done = run_program(
            ROOT / "__main__.py",
            config,
            secret_keys or [],
            project="hyperpod-dpd",
            stack=stack,
            preview=preview,
        )
        return aws_accepts(done, config, preview)

    if fresh:
        return run()
    return copy.deepcopy(handed_stacks.kept(_RUNS, key, lambda: shared_run(key, run)))


def write_project(directory: Path, raw: dict[str, Any], stack: str = "dev") -> Path:
    """A project directory holding this program and a Pulumi.<stack>.yaml with `raw` as its
    config: what `make_plan` and the CLI read."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in ("Pulumi.yaml", "__main__.py"):
        (directory / name).write_text((ROOT / name).read_text())
    (directory / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump({"config": raw}))
    return directory


@pytest.fixture(autouse=True, scope="session")
def _plans_reuse_program_runs():
    """`make_plan` runs the program through the engine; within the suite, the same program and
    config give the same run (see run_stack), so a run is kept and each plan gets a copy
    (tests/support/program_runs.py plan_run)."""
    import hyperpod_dpd.plan.planner as plan_module

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(plan_module, "run_program", plan_run)
        yield


@pytest.fixture(autouse=True, scope="session")
def _simulator_answers_kept_by_their_inputs():
    """`advise` run in process asks aisimulate only for configs no test asked for before
    (tests/support/simulator_cache.py says by what they are kept and why that is sound)."""
    from hyperpod_dpd.advise import engine
    from tests.support.simulator_cache import cached_session

    session = cached_session(engine.Session)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(engine, "Session", session)
        yield
    session.SHARED.close()  # the one real simulator the commands shared, if one was started
