"""Configuration errors that name the key, the value received, what is allowed and the fix."""

from __future__ import annotations

import difflib
import json
import math
import re
from dataclasses import dataclass
from typing import Any, get_args, get_origin

from pydantic import BaseModel, ValidationError

from core.exits import UsageProblem
from core.vocabulary import PROJECT
from settings.fields import PATTERN_HINTS, repair_pattern


@dataclass(frozen=True)
class ConfigProblem:
    key: str  # full key with path: "hyperpod-dpd:endpoint.routingStrategy"
    value: Any  # what was received; MISSING when absent
    allowed: str
    fix: str

    def render(self) -> str:
        got = "not set" if self.value is MISSING else f"got {_show(self.value)}"
        return f"{self.key}: {got}; allowed: {self.allowed}.\n    Fix: {self.fix}"


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class ConfigError(UsageProblem):
    """Bad stack configuration: every problem at once. The program raises it as a RunError
    (infra/stack_config.py), so `pulumi up` prints the message without a traceback."""

    def __init__(self, problems: list[ConfigProblem], source: str = "stack configuration"):
        self.problems, self.source = problems, source
        lines = [f"Invalid {source} ({len(problems)} problem{'s' * (len(problems) != 1)}):"]
        lines += [f"  - {p.render()}" for p in problems]
        super().__init__("\n".join(lines))


def _show(value: Any) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


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


def _model_at(root: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model class under `root` that holds the last element of `loc` (for listing allowed
    keys)."""
    model: Any = root
    for part in loc[:-1]:
        if isinstance(model, type) and issubclass(model, BaseModel):
            field = next((f for f in model.model_fields.values() if f.alias == part), None)
            if field is None:
                return None
            model = field.annotation
        elif get_origin(model) is dict:
            model = get_args(model)[1]  # a map entry: the name is free, its value is typed
        else:
            return None
        # Optional[X] -> X
        args = [a for a in get_args(model) if a is not type(None)]
        if get_origin(model) is not dict and len(args) == 1:
            model = args[0]
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def _allowed_keys(root: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    model = _model_at(root, loc)
    return [f.alias for f in model.model_fields.values()] if model else []


def _default_of(root: type[BaseModel], loc: tuple[Any, ...]) -> Any | None:
    model = _model_at(root, loc)
    if model is None:
        return None
    field = next((f for f in model.model_fields.values() if f.alias == loc[-1]), None)
    if field is None or field.is_required():
        return None
    default = field.get_default(call_default_factory=True)
    return default if isinstance(default, str | int | float | bool) else None


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


def problems_from_validation(error: ValidationError, root: type[BaseModel]) -> list[ConfigProblem]:
    """Turn pydantic's errors validating `root` into ConfigProblems that speak in config keys."""
    problems = []
    for e in error.errors(include_url=False):
        loc = tuple(e["loc"])
        key = full_key(loc)
        if e["type"] == "missing":
            allowed = "a value is required here (no default)"
            example = _field_example(root, loc)
            problems.append(ConfigProblem(key, MISSING, allowed, set_fix(key, example)))
        elif e["type"] == "extra_forbidden":
            known = _allowed_keys(root, loc)
            close = difflib.get_close_matches(str(loc[-1]), known, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            fix = f"{hint}Remove it: pulumi config rm --path '{key}'"
            allowed = "keys " + ", ".join(known)
            problems.append(ConfigProblem(key, e["input"], allowed, fix))
        elif loc and loc[-1] == "[key]":
            problems.append(_bad_map_key(loc[:-1], e))
        else:
            problems.append(
                ConfigProblem(key, e["input"], _allowed(e), set_fix(key, _example(root, loc, e)))
            )
    return problems


def _example(root: type[BaseModel], loc: tuple[Any, ...], error: dict[str, Any]) -> Any | None:
    """The value a fix names: what the user wrote, repaired (the text "2048" as the number, a
    word as the list of it, the nearest allowed word); else the default, the nearest bound, or
    the field's documented example. None: nothing to name."""
    for found in (
        _repaired(error),
        _default_of(root, loc),
        _bound(error),
        _field_example(root, loc),
        _first_word(error),
    ):
        if found is not None:
            return found
    return None


def _repaired(error: dict[str, Any]) -> Any | None:
    kind, value, ctx = error["type"], error.get("input"), error.get("ctx", {})
    if kind in ("int_parsing", "int_type", "int_from_float"):
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value)
        if isinstance(value, float) and math.isfinite(value):
            return round(value)
    if kind in ("float_parsing", "float_type") and isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    if kind == "list_type" and isinstance(value, str | int | float) and not isinstance(value, bool):
        return [value]
    if kind in ("dict_type", "model_type", "model_attributes_type") and isinstance(value, list):
        pairs = [str(item).partition("=") for item in value]
        if pairs and all(sep and name.strip() for name, sep, _ in pairs):
            return {name.strip(): text.strip() for name, _, text in pairs}
    if kind == "literal_error" and isinstance(value, str):
        words = re.findall(r"'([^']*)'", ctx.get("expected", ""))
        close = difflib.get_close_matches(value, words, n=1, cutoff=0.5)
        return close[0] if close else None
    if kind == "string_pattern_mismatch" and isinstance(value, str):
        return repair_pattern(ctx["pattern"], value)
    if kind == "string_too_long" and isinstance(value, str):
        return value[: ctx["max_length"]]
    return None


def _first_word(error: dict[str, Any]) -> str | None:
    """The first word a literal allows (when none is near what was written)."""
    words = re.findall(r"'([^']*)'", error.get("ctx", {}).get("expected", ""))
    return words[0] if error["type"] == "literal_error" and words else None


def _field_example(root: type[BaseModel], loc: tuple[Any, ...]) -> Any | None:
    """The field's documented example, else the least whole number its bounds allow."""
    model = _model_at(root, loc)
    if model is None:
        return None
    field = next((f for f in model.model_fields.values() if f.alias == loc[-1]), None)
    if field is None:
        return None
    if field.examples:
        return field.examples[0]
    whole = int in (field.annotation, *get_args(field.annotation))
    for bound in field.metadata:
        if whole and isinstance(getattr(bound, "ge", None), int):
            return bound.ge
        if whole and isinstance(getattr(bound, "gt", None), int):
            return bound.gt + 1
    return None


def _bound(error: dict[str, Any]) -> int | float | None:
    """The nearest value a bounds error allows (the bound itself, or the next whole number past
    a strict bound on a whole number), so the fix names a value that passes."""
    ctx, value = error.get("ctx", {}), error.get("input")
    for name in ("ge", "le"):
        if isinstance(ctx.get(name), int | float):
            return ctx[name]
    whole = isinstance(value, int) and not isinstance(value, bool)
    if whole and isinstance(ctx.get("gt"), int):
        return ctx["gt"] + 1
    if whole and isinstance(ctx.get("lt"), int):
        return ctx["lt"] - 1
    return None


def _bad_map_key(loc: tuple[Any, ...], error: dict[str, Any]) -> ConfigProblem:
    """A map entry whose name breaks the name's rule (pydantic reports it at loc + '[key]'): the
    fix renames it, to the nearest name the rule allows when there is one."""
    key, name = full_key(loc), str(loc[-1])
    pattern = error.get("ctx", {}).get("pattern")
    allowed = _allowed(error)
    ctx = error.get("ctx", {})
    if pattern:
        renamed = _nearest_name(name, pattern, ctx)
    elif error["type"] == "string_too_long":
        renamed = name[: ctx["max_length"]]
    else:
        renamed = None
    if renamed is None:
        return ConfigProblem(key, name, allowed, f"rename {key} to a name of that form")
    return ConfigProblem(key, name, allowed, f"rename {key} to {full_key((*loc[:-1], renamed))}")


def _nearest_name(name: str, pattern: str, ctx: dict[str, Any]) -> str | None:
    """`name` with what the name rule refuses replaced by '-' (or '_'), lowercased or prefixed
    with a letter if the rule needs it: the first such name the rule accepts."""
    limit = ctx.get("max_length") or 63
    for text in (name, name.lower()):
        for joiner in "-_":
            base = re.sub(r"[^A-Za-z0-9]+", joiner, text).strip("-_")
            for candidate in (base, "x" + base):
                candidate = candidate[:limit].rstrip("-_")
                if candidate and re.fullmatch(pattern, candidate):
                    return candidate
    return None
