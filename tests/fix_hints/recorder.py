"""A pytest plugin that keeps every stack configuration the suite hands `parse_settings`:
the stacks the fix-hint audit (tests/test_fix_hints.py) replays, so that every check a test
exercises has its printed fix applied, without a list to keep in step with the checks.

    HINT_RECORD=/tmp/stacks.pickle pytest -p tests.fix_hints.recorder -n 0 tests/settings ...
"""

from __future__ import annotations

import os
import pickle
import sys
from typing import Any

import settings.parse

_ORIGINAL = settings.parse.parse_settings
_SEEN: list[tuple[dict[str, Any], tuple[str, ...]]] = []


def _recording(raw, secret_keys=()):
    _SEEN.append((dict(raw), tuple(secret_keys)))
    return _ORIGINAL(raw, secret_keys)


def pytest_configure(config) -> None:
    """Every program runs here, even one the session that started this run has run already
    (tests/support/program_runs.py shares runs with it): the stacks a program reads are recorded as it
    reads them."""
    import tests.support.program_runs

    tests.support.program_runs.READ_SHARED_RUNS = False


def pytest_collection_finish(session) -> None:
    """Every module that imported parse_settings by name (the tests, the settings package, the
    program's config reader) now calls the recording one."""
    me = sys.modules[__name__]
    for module in list(sys.modules.values()):
        if module is me:
            continue
        for name, value in list(getattr(module, "__dict__", {}).items()):
            if value is _ORIGINAL:
                setattr(module, name, _recording)


def pytest_sessionfinish(session) -> None:
    with open(os.environ["HINT_RECORD"], "wb") as out:
        pickle.dump(_SEEN, out)
