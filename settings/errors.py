"""Configuration errors that name the key, the value received, what is allowed and the fix."""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from typing import Any, get_args, get_origin

from pydantic import BaseModel, ValidationError

from core.exits import UsageProblem
from core.vocabulary import PROJECT
from settings.fields import PATTERN_HINTS


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
    """('endpoint', 'prefill', 'replicas') -> 'hyperpod-dpd:endpoint.prefill.replicas'."""
    if loc and loc[0] == "region":
        return "aws:region"
    head, *rest = (str(part) for part in loc)
    path = "".join(f"[{p}]" if p.isdigit() else f".{p}" for p in rest)
    return f"{PROJECT}:{head}{path}"


def set_fix(key: str, example: Any | None = None) -> str:
    """How to set `key`: a `pulumi config set` line, or the YAML to write for lists and maps."""
    if isinstance(example, list | dict):
        return f"in Pulumi.<stack>.yaml set {key} to {json.dumps(example)}"
    value = "<value>" if example is None else str(example)
    path = " --path" if "." in key.partition(":")[2] else ""
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
            problems.append(ConfigProblem(key, MISSING, allowed, set_fix(key)))
        elif e["type"] == "extra_forbidden":
            known = _allowed_keys(root, loc)
            close = difflib.get_close_matches(str(loc[-1]), known, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            fix = f"{hint}Remove it: pulumi config rm --path '{key}'"
            allowed = "keys " + ", ".join(known)
            problems.append(ConfigProblem(key, e["input"], allowed, fix))
        else:
            problems.append(
                ConfigProblem(key, e["input"], _allowed(e), set_fix(key, _default_of(root, loc)))
            )
    return problems
