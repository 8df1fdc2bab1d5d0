"""No list entry twice, for every list-valued key of the settings: hypothesis repeats an entry of
each (found by walking the settings model, so a key added later is covered without editing
this file) in the good stacks that hold one, and the offline plan, run as the command line runs
it, refuses it by key and index (exit 2), never with an internal error (exit 3: a duplicated
resource name such as traffic-ingress-<cidr> reaching the engine).

A list marked RepeatsCheckedBy (vLLM args, where one value may follow two flags; the split's API
key names) is judged by its own check: the repeat is refused under the list's key."""

from __future__ import annotations

import copy
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from core.exits import EXIT_BAD_INPUT
from hyperpod_dpd.cli import main
from settings import StackSettings
from settings.config.errors import full_key
from settings.config.unique import RepeatsCheckedBy
from tests.conftest import write_project
from tests.settings.good_stacks import GOOD_STACKS

ANY = "*"  # a map's key in a list key's path


def list_keys(model: type[BaseModel] = StackSettings, path: tuple = ()) -> dict[tuple, bool]:
    """Every list-valued key under `model`, as a path (ANY for a map's key), with whether its
    entries may repeat (RepeatsCheckedBy)."""
    out = {}
    for name, field in model.model_fields.items():
        here = (*path, field.alias or name)
        kind = _inner(field.annotation)
        if get_origin(kind) is list:
            out[here] = any(isinstance(m, RepeatsCheckedBy) for m in field.metadata)
        elif get_origin(kind) is dict and _is_model(_inner(get_args(kind)[1])):
            out |= list_keys(_inner(get_args(kind)[1]), (*here, ANY))
        elif _is_model(kind):
            out |= list_keys(kind, here)
    return out


def _inner(annotation: Any) -> Any:
    """`X | None` and Annotated[X, ...] as X."""
    if get_origin(annotation) is Annotated:
        return _inner(get_args(annotation)[0])
    if get_origin(annotation) in (UnionType, Union):
        (one,) = [a for a in get_args(annotation) if a is not type(None)]
        return _inner(one)
    return annotation


def _is_model(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, BaseModel)


LIST_KEYS = list_keys()


def _found(node: Any, path: tuple, at: tuple = ()) -> list[tuple]:
    """The concrete paths in a stack's config (its top-level key split off) where `path` holds a
    non-empty list."""
    if not path:
        return [at] if isinstance(node, list) and node else []
    if not isinstance(node, dict):
        return []
    head, rest = path[0], path[1:]
    keys = list(node) if head == ANY else [head] if head in node else []
    return [p for k in keys for p in _found(node[k], rest, (*at, k))]


def occurrences(path: tuple) -> list[tuple[str, str, tuple]]:
    """(good stack, its stack name, the concrete path) of every entry of the list key `path`."""
    out = []
    for name, (stack, build) in sorted(GOOD_STACKS.items()):
        raw = build()
        top = f"hyperpod-dpd:{path[0]}"
        out += [(name, stack, (top, *p)) for p in _found(raw.get(top), path[1:])]
    return out


def test_every_list_key_has_an_entry_in_a_good_stack():
    """So the property below repeats an entry of each: a list key added later needs a good
    stack that uses it (tests/settings/good_stacks.py)."""
    assert ("trafficListener", "allowedCidrs") in LIST_KEYS
    assert ("endpoints", ANY, "groups") in LIST_KEYS and LIST_KEYS[("endpoint", "decode", "args")]
    missing = [".".join(path) for path in LIST_KEYS if not occurrences(path)]
    assert not missing, f"no good stack holds an entry of: {missing}"


def _get(raw: dict, path: tuple) -> Any:
    node = raw
    for part in path:
        node = node[part]
    return node


@pytest.mark.long
@pytest.mark.parametrize("path", sorted(LIST_KEYS), ids=".".join)
@settings(max_examples=6, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_an_entry_repeated_in_any_list_is_refused_by_key_and_index(
    path, data, tmp_path_factory, capsys
):
    name, stack, at = data.draw(st.sampled_from(occurrences(path)), label="where")
    raw = copy.deepcopy(GOOD_STACKS[name][1]())
    entries = _get(raw, at)
    i = data.draw(st.integers(0, len(entries) - 1), label="entry")
    position = data.draw(st.integers(0, len(entries)), label="inserted at")
    entries.insert(position, copy.deepcopy(entries[i]))
    project = write_project(tmp_path_factory.mktemp("repeat"), raw, stack)
    capsys.readouterr()
    code = main(["plan", "--stack", stack, "--project-dir", str(project),
                 "--out", str(project / "plan")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == EXIT_BAD_INPUT, err[-2000:]
    key = full_key((at[0].partition(":")[2], *at[1:]))
    if LIST_KEYS[path]:  # RepeatsCheckedBy: its own check names the list
        assert f"  - {key}: got " in err, err[-2000:]
    else:
        later = position if position > i else i + 1
        assert f"  - {key}[{later}]: got " in err, err[-2000:]
        assert f"each entry once: {key.partition(':')[2]}[" in err
