"""The config problems parse_settings raises, rendered as the user reads them, and their fixes
followed."""

from __future__ import annotations

import pytest

from settings import ConfigError, parse_settings
from tests.fix_hints.edits import apply, suggestions


def problems_of(raw, secret_keys=()) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse_settings(raw, secret_keys)
    return [p.render() for p in info.value.problems]


def only_problem(raw, secret_keys=()) -> str:
    problems = problems_of(raw, secret_keys)
    assert len(problems) == 1, problems
    return problems[0]


def followed(raw, message: str):
    """A copy of `raw` with the printed fix of `message` made as a user follows it: its first
    suggestion, read as the fix-hint audit reads it (tests/fix_hints/edits.py)."""
    [edits, *_] = suggestions(message.split("Fix:", 1)[1])
    return apply(raw, edits)
