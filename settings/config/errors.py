"""The stack configuration's problems (core/problems.py ConfigProblem, the one type every refusal
uses) in config keys: pydantic's errors turned into them, keys written as `pulumi config set
--path` reads them, and the fix lines that set a key."""

from __future__ import annotations

import dataclasses
import difflib
import json
from typing import Any

from pydantic import BaseModel, ValidationError

from core.problems import MISSING, ConfigProblem
from core.pulumi_commands import naming_stack
from core.vocabulary import PROJECT
from settings.config.fields import PATTERN_HINTS
from settings.config.fix_values import example_for, field_example, model_at, nearest_name

STACK_FILE = "Pulumi.<stack>.yaml"


def for_stack(problems: list[ConfigProblem], stack: str) -> list[ConfigProblem]:
    """The problems with their fixes naming the stack: its own file (Pulumi.dev.yaml), not the
    placeholder the checks write, which know no stack, and `--stack` in each Pulumi command."""
    named = f"Pulumi.{stack}.yaml"
    return [
        dataclasses.replace(p, fix=naming_stack(p.fix.replace(STACK_FILE, named), stack))
        for p in problems
    ]


def full_key(loc: tuple[Any, ...]) -> str:
    """('endpoint', 'prefill', 'replicas') -> 'hyperpod-dpd:endpoint.prefill.replicas', in the
    property-path syntax `pulumi config set --path` reads (pulumi's resource.ParsePropertyPath):
    a list index as [0], a map key that holds a dot or a bracket quoted, as
    cost.hourlyPrices["ml.p5.48xlarge"] (written with dots, the CLI would nest ml / p5 / ...)."""
    if loc and loc[0] == "region":
        return "aws:region"
    head, *rest = loc
    return f"{PROJECT}:{head}" + "".join(_path_segment(part) for part in rest)


def _path_segment(part: Any) -> str:
    """A list index (an int in pydantic's loc) as [0]; a map key as .name, or quoted as
    ParsePropertyPath reads it back (only \" is an escape there). A key of digits ("2", a group
    or endpoint name) stays .2: [2] would be a list index, which a map cannot take."""
    if isinstance(part, int) and not isinstance(part, bool):
        return f"[{part}]"
    text = str(part)
    if any(c in text for c in '.[]"') or not text:
        return '["' + text.replace('"', '\\"') + '"]'
    return f".{text}"


def set_fix(key: str, example: Any | None = None) -> str:
    """How to set `key`: a `pulumi config set` line, or the YAML to write for lists and maps.
    A boolean is written true/false: with --path the CLI stores only those words as booleans."""
    if isinstance(example, list | dict):
        return f"in Pulumi.<stack>.yaml set {key} to {json.dumps(example)}"
    if isinstance(example, bool):
        example = json.dumps(example)
    value = "<value>" if example is None else str(example)
    path = " --path" if any(c in key.partition(":")[2] for c in ".[") else ""
    return f"pulumi config set{path} '{key}' {value}   (or edit Pulumi.<stack>.yaml)"


def rename_fix(key: str, new: str, value: Any, taken: bool) -> str:
    """The fix of a misspelled key: renamed to the key it meant, its value kept (a value given
    at the wrong name is still the user's value); removed when the right key is set already."""
    if taken:
        return f"did you mean '{new}'? It is set already: remove {key} (pulumi config rm --path '{key}')"
    how = f"did you mean '{new}'? rename {key} to {new}, keeping its value"
    if isinstance(value, bool | int | float | str) and "'" not in str(value):
        shown = json.dumps(value) if isinstance(value, bool) else str(value)
        return (f"{how}: pulumi config rm --path '{key}' && pulumi config set --path '{new}' "
                f"'{shown}'")  # fmt: skip
    return f"{how} in {STACK_FILE}"


def _given(values: dict[str, Any] | None, loc: tuple[Any, ...]) -> bool:
    """Whether `values` (the config as given, by field name) sets the key at `loc`."""
    node: Any = values
    for part in loc:
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def _allowed_keys(root: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    model = model_at(root, loc)
    return [f.alias for f in model.model_fields.values()] if model else []


_TYPE_WORDS = {
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "finite_number": "a finite number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "a string",
    "list_type": "a list",
    "dict_type": "a mapping (a YAML object)",
    "model_type": "a mapping (a YAML object)",
    "model_attributes_type": "a mapping (a YAML object)",
}


def _allowed(error: dict[str, Any]) -> str:
    kind, ctx = error["type"], error.get("ctx", {})
    if kind in _TYPE_WORDS:
        return _TYPE_WORDS[kind]
    if kind == "literal_error":
        return f"one of {ctx['expected'].replace(' or ', ', ')}"
    if kind == "string_pattern_mismatch":
        return PATTERN_HINTS.get(ctx["pattern"], f"a string matching {ctx['pattern']}")
    bounds = {
        "greater_than_equal": ">= {ge}",
        "greater_than": "> {gt}",
        "less_than_equal": "<= {le}",
        "less_than": "< {lt}",
        "string_too_short": "at least {min_length} characters",
        "string_too_long": "at most {max_length} characters",
    }
    if kind in bounds:
        return bounds[kind].format(**ctx)
    if kind == "value_error":
        return str(ctx.get("error", error["msg"]))
    return error["msg"]


def problems_from_validation(
    error: ValidationError, root: type[BaseModel], given: dict[str, Any] | None = None
) -> list[ConfigProblem]:
    """Turn pydantic's errors validating `root` into ConfigProblems that speak in config keys
    (`given`: the values validated, by field name, to tell a misspelled key from a duplicate)."""
    problems = []
    for e in error.errors(include_url=False):
        loc = tuple(e["loc"])
        key = full_key(loc)
        if e["type"] == "missing":
            allowed = "a value is required here (no default)"
            example = field_example(root, loc)
            problems.append(ConfigProblem(key, MISSING, allowed, set_fix(key, example)))
        elif e["type"] == "extra_forbidden":
            known = _allowed_keys(root, loc)
            close = difflib.get_close_matches(str(loc[-1]), known, n=1)
            if close:
                new = full_key((*loc[:-1], close[0]))
                fix = rename_fix(key, new, e["input"], _given(given, (*loc[:-1], close[0])))
            else:
                fix = f"Remove it: pulumi config rm --path '{key}'"
            allowed = "keys " + ", ".join(known)
            problems.append(ConfigProblem(key, e["input"], allowed, fix))
        elif loc and loc[-1] == "[key]":
            problems.append(_bad_map_key(loc[:-1], e))
        else:
            problems.append(
                ConfigProblem(key, e["input"], _allowed(e), set_fix(key, example_for(root, loc, e)))
            )
    return problems


def _bad_map_key(loc: tuple[Any, ...], error: dict[str, Any]) -> ConfigProblem:
    """A map entry whose name breaks the name's rule (pydantic reports it at loc + '[key]'): the
    fix renames it, to the nearest name the rule allows when there is one."""
    key, name = full_key(loc), str(loc[-1])
    pattern = error.get("ctx", {}).get("pattern")
    allowed = _allowed(error)
    ctx = error.get("ctx", {})
    if pattern:
        renamed = nearest_name(name, pattern, ctx)
    elif error["type"] == "string_too_long":
        renamed = name[: ctx["max_length"]]
    else:
        renamed = None
    if renamed is None:
        return ConfigProblem(key, name, allowed, f"rename {key} to a name of that form")
    return ConfigProblem(key, name, allowed, f"rename {key} to {full_key((*loc[:-1], renamed))}")
