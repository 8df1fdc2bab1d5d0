"""The config problems parse_settings raises, rendered as the user reads them."""

from __future__ import annotations

import pytest

from settings import ConfigError, parse_settings


def problems_of(raw, secret_keys=()) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse_settings(raw, secret_keys)
    return [p.render() for p in info.value.problems]


def only_problem(raw, secret_keys=()) -> str:
    problems = problems_of(raw, secret_keys)
    assert len(problems) == 1, problems
    return problems[0]
