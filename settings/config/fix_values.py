"""The value a config fix names: what the user wrote, repaired; the key's default, nearest
bound or documented example; a map entry's nearest allowed name. Each is a value that passes the
key's rule, so the fix can be followed as printed (tests/test_fix_hints.py follows them)."""

from __future__ import annotations

import difflib
import math
import re
from typing import Any, get_args, get_origin

from pydantic import BaseModel

from settings.config.fields import repair_pattern


def model_at(root: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
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


def default_of(root: type[BaseModel], loc: tuple[Any, ...]) -> Any | None:
    model = model_at(root, loc)
    if model is None:
        return None
    field = next((f for f in model.model_fields.values() if f.alias == loc[-1]), None)
    if field is None or field.is_required():
        return None
    default = field.get_default(call_default_factory=True)
    return default if isinstance(default, str | int | float | bool) else None


def example_for(root: type[BaseModel], loc: tuple[Any, ...], error: dict[str, Any]) -> Any | None:
    """The value a fix names: what the user wrote, repaired (the text "2048" as the number, a
    word as the list of it, the nearest allowed word); else the default, the nearest bound, or
    the field's documented example. None: nothing to name."""
    for found in (
        _repaired(error),
        default_of(root, loc),
        _bound(error),
        field_example(root, loc),
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
    if kind == "value_error":  # a check that knows the nearest value it takes says so
        return getattr(ctx.get("error"), "suggestion", None)
    return None


def _first_word(error: dict[str, Any]) -> str | None:
    """The first word a literal allows (when none is near what was written)."""
    words = re.findall(r"'([^']*)'", error.get("ctx", {}).get("expected", ""))
    return words[0] if error["type"] == "literal_error" and words else None


def field_example(root: type[BaseModel], loc: tuple[Any, ...]) -> Any | None:
    """The field's documented example, else the least whole number its bounds allow."""
    model = model_at(root, loc)
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


def nearest_name(name: str, pattern: str, ctx: dict[str, Any]) -> str | None:
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
