"""No entry of a list twice: every list-valued key of the settings holds each entry once.

A list's entries become things that must be one of a kind: resource names (the split's
`traffic-ingress-<cidr>` rules, one access entry per role, one subnet per AZ), AWS objects
(EC2 refuses a repeated security group rule, InvalidPermission.Duplicate; SNS answers a second
subscription of an endpoint with the first, so removing either entry later unsubscribes both),
rendered lists (a NetworkPolicy peer, a runner label). A repeated entry is at best ignored and
at worst a `pulumi up` that fails half way, so it is refused by key and index.

The check walks the settings model itself, so a list key added later is covered without being
named here. A list whose repeats a check of its own judges says so with `RepeatsCheckedBy` (vLLM
args, where the same value may follow two flags and settings/endpoint/vllm_args.py refuses a flag
twice; the split's API key names, whose check never prints an entry that may be a pasted key).
How two entries are told alike: `SameAs` on the entry type (an email address's domain in any
case), else equal text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import UnionType
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel

from core.problems import ConfigProblem
from settings.config.errors import full_key, set_fix


@dataclass(frozen=True)
class RepeatsCheckedBy:
    """Field metadata: this list's repeats are judged by `check`, not here."""

    check: str


@dataclass(frozen=True)
class SameAs:
    """Entry-type metadata: two entries are the same when `canonical` gives equal values."""

    canonical: Callable[[Any], Any]


@dataclass(frozen=True)
class Once:
    """Field metadata: what a repeated entry breaks, said in the refusal."""

    why: str


GENERIC_WHY = "a repeated entry names the same thing twice"


def check_unique_lists(model: BaseModel, loc: tuple[Any, ...] = ()) -> list[ConfigProblem]:
    """Every repeated entry of every list under `model` (a settings model), by key and index."""
    problems = []
    for name, field in type(model).model_fields.items():
        value = getattr(model, name)
        here = (*loc, field.alias or name)
        if isinstance(value, BaseModel):
            problems += check_unique_lists(value, here)
        elif isinstance(value, dict):
            for key, item in value.items():
                if isinstance(item, BaseModel):
                    problems += check_unique_lists(item, (*here, key))
        elif isinstance(value, list) and not _marked(field.metadata, RepeatsCheckedBy):
            once = _marked(field.metadata, Once)
            why = once.why if once else GENERIC_WHY
            problems += _repeated(value, here, _canonical(field.annotation), why)
    return problems


def _repeated(
    entries: list[Any], loc: tuple[Any, ...], canonical: Callable[[Any], Any], why: str
) -> list[ConfigProblem]:
    key = full_key(loc)
    first: dict[Any, int] = {}
    kept = []
    for i, entry in enumerate(entries):
        same = canonical(entry)
        if same not in first:
            first[same] = i
            kept.append(entry)
    problems = []
    for i, entry in enumerate(entries):
        j = first[canonical(entry)]
        if j != i:
            again = "" if entries[j] == entry else f" ({entries[j]!r}, written otherwise)"
            problems.append(
                ConfigProblem(
                    full_key((*loc, i)),
                    entry,
                    f"each entry once: {key.partition(':')[2]}[{j}] is this entry already"
                    f"{again}; {why}",
                    f"remove it: {set_fix(key, kept)}",
                )
            )
    return problems


def _marked(metadata: list[Any], kind: type) -> Any:
    return next((m for m in metadata if isinstance(m, kind)), None)


def _canonical(annotation: Any) -> Callable[[Any], Any]:
    """The SameAs of a list annotation's entry type (`list[X] | None` too), else identity."""
    if get_origin(annotation) in (UnionType, Union):
        annotation = next(a for a in get_args(annotation) if a is not type(None))
    (entry,) = get_args(annotation) or (None,)
    same = _marked(list(getattr(entry, "__metadata__", ())), SameAs)
    return same.canonical if same else _identity


def _identity(value: Any) -> Any:
    return value
