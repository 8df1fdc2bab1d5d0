"""Any value at any key of a stack is either taken or refused as a ConfigError naming it: never
another exception (a traceback, exit 3), and a stack the settings take is judged by the policy
gate without one either. Hypothesis puts hostile values at keys of the example stacks."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policies.gate import judge
from settings import ConfigError, parse_settings
from specs.desired import desired_state
from tests.conftest import stack_raw

STACKS = {name: stack_raw(name) for name in ("dev", "prod", "canary")}

HOSTILE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, -1, 1, 2**31, 2**63, math.inf, -math.inf, math.nan, 0.5, 1e-300]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.sampled_from(["", " ", "0", "-1", "1e9", "inf", "nan", "true", "ml.p5.48xlarge",
                     "10.0.0.0/8", "use2-az9", "a" * 300, "\x00", "é", "../../etc"]),
    st.lists(st.text(max_size=8), max_size=3),
    st.dictionaries(st.text(max_size=8), st.integers(), max_size=2),
)  # fmt: skip


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    """Every key path of a stack's config, leaves and objects alike."""
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for key, value in node.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += _paths(value, (*prefix, i))
    return out


def _with(raw: dict, path: tuple, value: Any) -> dict:
    import copy

    out = copy.deepcopy(raw)
    node = out
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return out


# Derandomized: the same 1000 stacks every run, so CI is stable (a run with random seeds and
# 5000 examples found the one traceback, since fixed: no control-plane AZ IDs).
@settings(
    max_examples=1000, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck)
)
@given(data=st.data())
def test_a_hostile_value_at_any_key_is_refused_by_name_or_taken(data):
    name = data.draw(st.sampled_from(sorted(STACKS)), label="stack")
    raw = STACKS[name]
    edits = data.draw(st.integers(1, 3), label="edits")
    for _ in range(edits):
        path = data.draw(st.sampled_from(_paths(raw)), label="key")
        raw = _with(raw, path, data.draw(HOSTILE, label="value"))
    try:
        s = parse_settings(raw)
    except ConfigError as error:
        assert error.problems and all(p.render() for p in error.problems)
        return
    judge(desired_state(s, "hyperpod-dpd", name))
