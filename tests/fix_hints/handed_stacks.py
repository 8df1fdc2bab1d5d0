"""The stack configurations handed to `parse_settings`, caught as they are handed: what the
fix-hint recorder (tests/fix_hints/recorder.py) keeps of the recorded tests, and what a program
run kept for reuse (tests/support/program_runs.py) keeps with it, so that a run read back instead
of made again hands them again (`kept`, `replay`): the recorder sees the same stacks whichever
worker, or which earlier test, made the run. No pytest here: a process a test starts (the CLI,
tests/support/cli_sharing_runs.py) imports this without it."""

from __future__ import annotations

import contextlib
import copy
import sys
from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Any, TypeVar

import settings.parse

T = TypeVar("T")
Handed = tuple[dict[str, Any], tuple[str, ...]]  # (raw, secret_keys) as parse_settings got them

_ORIGINAL = settings.parse.parse_settings
# Where each stack handed goes: the recorder's list while a recorded test runs, and the list of
# each computation under way (`during`), innermost last.
_LISTENERS: list[list[Handed]] = []


def _handing(raw, secret_keys: Iterable[str] = ()):
    secret_keys = tuple(secret_keys)
    if _LISTENERS:
        replay([(copy.deepcopy(dict(raw)), secret_keys)])  # as handed, whatever changes it later
    return _ORIGINAL(raw, secret_keys)


def install() -> None:
    """Every module that imported parse_settings by name (the tests, the settings package, the
    program's config reader) calls the catching one from now on."""
    me = sys.modules[__name__]
    for module in list(sys.modules.values()):
        if module is me:
            continue
        for name, value in list(getattr(module, "__dict__", {}).items()):
            if value is _ORIGINAL:
                setattr(module, name, _handing)


@contextlib.contextmanager
def listening(into: list[Handed]) -> Iterator[list[Handed]]:
    """Every stack handed parse_settings (or replayed) inside this block is appended to `into`."""
    _LISTENERS.append(into)
    try:
        yield into
    finally:
        assert _LISTENERS.pop() is into


def during(compute: Callable[[], T]) -> tuple[T, list[Handed]]:
    """compute()'s result and the stacks it handed parse_settings (those `replay`ed in it too)."""
    with listening([]) as calls:
        return compute(), calls


def replay(calls: list[Handed]) -> None:
    """Hand `calls` again, to whoever listens now, as if what handed them had run again."""
    for listener in _LISTENERS:
        listener.extend(calls)


def kept(
    cache: dict[Hashable, tuple[T, list[Handed]]], key: Hashable, compute: Callable[[], T]
) -> T:
    """compute(), once per `key` in `cache`; a later call hands again the stacks it handed."""
    if key in cache:
        result, calls = cache[key]
        replay(calls)
        return result
    cache[key] = during(compute)
    return cache[key][0]
