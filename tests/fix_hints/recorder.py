"""A pytest plugin (tests/conftest.py loads it in every session) that keeps every stack
configuration the recorded tests hand `parse_settings`: the stacks the fix-hint audit
(tests/test_fix_hints.py) replays, so that every check a test exercises has its printed fix
applied, without a list to keep in step with the checks.

A session that runs the audit and every recorded test (tests/fix_hints/recorded_tests.py) runs
them in one process, the audit's tests last: the audit reads what the recorded tests handed there
(`in_session`). Any other session's audit runs the recorded tests in a pytest of its own, which
writes their stacks to $HINT_RECORD:

    HINT_RECORD=/tmp/s.pickle pytest -n 0 -k "not ..." tests/settings tests/policies/test_gate.py
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Sequence
from fnmatch import fnmatch

import pytest

from tests.fix_hints import handed_stacks
from tests.fix_hints.handed_stacks import Handed
from tests.fix_hints.recorded_tests import (
    RECORDED,
    pytest_xdist_make_scheduler,  # noqa: F401 (a hook)
    recorded,
)

_SEEN: list[Handed] = []  # what the recorded tests run in this process handed, in order
_RAN: set[str] = set()  # those tests
_FAILED: list[str] = []
_DESELECTED: list[pytest.Item] = []
# The recorded tests of this session, when it has every one of them; else None.
_WHOLE: frozenset[str] | None = None
_recording = False
_OUT: str | None = None


def whole(config, items: Sequence[pytest.Item], deselected: Sequence[pytest.Item]) -> bool:
    """Whether this session has every test the recording run would run: each test file of
    RECORDED given whole (a path, not some of its tests by node id), collected (not --ignore'd),
    none of its recorded tests deselected (-k, -m, --deselect)."""
    if any(recorded(item.nodeid) for item in deselected):
        return False
    here, root = config.invocation_params.dir, config.rootpath
    given = [(here / arg).resolve() for arg in config.args if "::" not in arg]
    collected = {item.path for item in (*items, *deselected)}
    patterns = config.getini("python_files")
    files = [
        path
        for r in RECORDED
        for path in ([root / r] if r.endswith(".py") else (root / r).rglob("*.py"))
        if any(fnmatch(path.name, pattern) for pattern in patterns)
    ]
    return all(f in collected and any(g == f or g in f.parents for g in given) for f in files)


def has_every_recorded_test() -> bool:
    """Whether this session collected every recorded test (`whole`)."""
    return _WHOLE is not None


def in_session() -> list[Handed] | None:
    """What the recorded tests handed parse_settings in this process, if it ran every one of
    them (the whole session's group); None otherwise."""
    if _WHOLE is None or not _WHOLE <= _RAN:
        return None
    assert not _FAILED, f"recorded tests failed, their stacks are not all recorded: {_FAILED}"
    return _SEEN


def pytest_deselected(items: Sequence[pytest.Item]) -> None:
    _DESELECTED.extend(items)


def pytest_collection_finish(session: pytest.Session) -> None:
    """From here on, every module that imported parse_settings by name calls the catching one."""
    global _WHOLE
    handed_stacks.install()
    if whole(session.config, session.items, _DESELECTED):
        _WHOLE = frozenset(item.nodeid for item in session.items if recorded(item.nodeid))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem):
    """A recorded test's stacks are kept, from its fixtures' setup to their teardown."""
    global _recording
    _recording = recorded(item.nodeid)
    try:
        if not _recording:
            return (yield)
        with handed_stacks.listening(_SEEN):
            return (yield)
    finally:
        if _recording:
            _RAN.add(item.nodeid)
        _recording = False


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if _recording and report.failed:
        _FAILED.append(report.nodeid)


def pytest_configure(config: pytest.Config) -> None:
    """The recording run's output (HINT_RECORD), not handed down to a pytest its tests start."""
    global _OUT
    _OUT = os.environ.pop("HINT_RECORD", None)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The recording run leaves what its tests handed where it was asked."""
    if _OUT:
        with open(_OUT, "wb") as out:
            pickle.dump(_SEEN, out)
