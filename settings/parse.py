"""From the config values Pulumi hands a program to the typed StackSettings (pure: no Pulumi).

The one decoder and validator of a stack's config: the running program reads its config through
program/stack_config.py, every command through settings/stack_file.py `read_stack` (the stack file
as the Pulumi CLI would hand it to the program); both end in `parse_settings`, so every path
decodes with the same rules (`decode_config_value`) and validates alike."""

from __future__ import annotations

import copy
import dataclasses
import difflib
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import ValidationError

from core.problems import ConfigError, ConfigProblem
from core.vocabulary import PROJECT
from settings.cluster.capacity import largest_count_that_fits
from settings.config.errors import problems_from_validation, rename_fix, set_fix
from settings.stack import BOOL_KEYS, OBJECT_KEYS, SECRET_KEYS, StackSettings, check_settings

_FIELD_KEYS = frozenset(f.alias for f in StackSettings.model_fields.values()) - {"region"}
# The keys the stack reads outside its own namespace. Those namespaces belong to the providers
# and Pulumi, whose other keys (aws:profile, kubernetes:context...) a stack may set: a key there
# is refused only when it is a near miss of one of these (aws:regon), never for being unknown.
READ_ELSEWHERE = ("aws:region",)


def parse_settings(raw: Mapping[str, Any], secret_keys: Iterable[str] = ()) -> StackSettings:
    """Decode and validate full-key config values into StackSettings: values as Pulumi hands
    them to a program (text, objects as JSON) or already decoded (decoding is idempotent).

    Pure: the commands, the tests and the program all go through here. Raises ConfigError listing
    every problem at once, so a user fixes the stack file in one pass.
    """
    raw = {key: decode_config_value(key, value) for key, value in raw.items()}
    problems: list[ConfigProblem] = []
    values: dict[str, Any] = {}
    if "aws:region" in raw:
        values["region"] = raw["aws:region"]
    for key, value in raw.items():
        namespace, _, name = key.partition(":")
        if namespace != PROJECT:
            problems += _near_miss(key, value)  # aws:, kubernetes:, pulumi:: the providers'
            continue
        if name in SECRET_KEYS:
            # Pulumi.yaml declares an empty default: "" means "not set".
            if value not in ("", None) and key not in set(secret_keys):
                problems.append(
                    ConfigProblem(
                        key,
                        "[plaintext value hidden]",
                        "a Pulumi secret (stored encrypted in the stack file)",
                        f"pulumi config set --secret {key} <value>",
                    )
                )
            continue
        if name not in _FIELD_KEYS:
            shown = "[secret]" if key in set(secret_keys) else value
            problems.append(_unknown_key(key, name, shown, raw))
            continue
        values[name] = value
    try:
        settings = StackSettings.model_validate(values)
    except ValidationError as exc:
        found = problems + problems_from_validation(exc, StackSettings, values)
        raise ConfigError(_counts_that_fit(found, values)) from None
    problems += check_settings(settings)
    if problems:
        raise ConfigError(problems)
    return settings


_COUNT = re.compile(rf"^{PROJECT}:instanceGroups\.([^.\[\]]+)\.instanceCount$")


def _counts_that_fit(problems: list[ConfigProblem], values: dict[str, Any]) -> list[ConfigProblem]:
    """An instanceCount above the API's limit gets, as its fix, the largest count the VPC's
    subnets also hold beside the other groups (the limit itself would fail on addresses next):
    the stack judged again with those counts at the limit, when the rest of it is valid."""
    over = {m[1]: p for p in problems if (m := _COUNT.match(p.key)) and p.allowed.startswith("<=")}
    if not over:
        return problems
    limit = int(next(iter(over.values())).allowed.removeprefix("<=").strip())
    at_limit = copy.deepcopy(values)
    try:
        for name in over:
            at_limit["instanceGroups"][name]["instanceCount"] = limit
        settings = StackSettings.model_validate(at_limit)
    except (KeyError, TypeError, ValidationError):
        return problems  # more is wrong: the API's limit is the fix to give for now
    fixed = []
    for p in problems:
        name = next((n for n, q in over.items() if q is p), None)
        if name is None:
            fixed.append(p)
            continue
        fits = largest_count_that_fits(
            settings.network, settings.availability_zone_id, settings.instance_groups, name
        )
        if fits >= limit:
            fixed.append(p)
        elif fits == 0:
            fixed.append(dataclasses.replace(p, fix=(
                f"the VPC's subnets hold no node of this group beside the others: lower the other "
                f"groups' instanceCount, or widen {PROJECT}:network.vpcCidr"
            )))  # fmt: skip
        else:
            fixed.append(dataclasses.replace(
                p,
                allowed=f"{p.allowed}, and at most {fits} that the VPC's subnets hold beside the "
                "other groups",
                fix=set_fix(p.key, fits),
            ))  # fmt: skip
    return fixed


def _near_miss(key: str, value: Any) -> list[ConfigProblem]:
    """A provider key that is a typo of one the stack reads: the key it meant, by name."""
    if key in READ_ELSEWHERE:
        return []
    close = difflib.get_close_matches(key, READ_ELSEWHERE, n=1, cutoff=0.8)
    if not close:
        return []
    return [
        ConfigProblem(
            key,
            value,
            f"{close[0]}, the key this stack reads",
            f"did you mean '{close[0]}'? rename {key} to {close[0]} (pulumi config rm {key}, "
            f"then pulumi config set {close[0]} {value if isinstance(value, str) else '<value>'})",
        )
    ]


def _unknown_key(key: str, name: str, value: Any, raw: dict[str, Any]) -> ConfigProblem:
    known = sorted(_FIELD_KEYS | SECRET_KEYS)
    close = difflib.get_close_matches(name, known, n=1)
    if close and close[0] not in SECRET_KEYS:
        new = f"{PROJECT}:{close[0]}"
        # A secret's value is not shown: renamed in the file, where it is stored encrypted.
        fix = rename_fix(key, new, None if value == "[secret]" else value, new in raw)
    else:
        hint = f"did you mean '{PROJECT}:{close[0]}'? " if close else ""
        fix = f"{hint}Remove it: pulumi config rm {key}"
    return ConfigProblem(key, value, "keys " + ", ".join(f"{PROJECT}:{k}" for k in known), fix)


def decode_config_value(key: str, text: Any) -> Any:
    """Pulumi hands every config value to the program as text; objects arrive as JSON and
    booleans as "true" / "false" (what the CLI accepts for `type: boolean`). Values that are
    already decoded pass unchanged."""
    name = key.partition(":")[2]
    if key.startswith(f"{PROJECT}:") and name in BOOL_KEYS and text in ("true", "false"):
        return text == "true"
    if key.startswith(f"{PROJECT}:") and name in OBJECT_KEYS and isinstance(text, str):
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            raise ConfigError(
                [ConfigProblem(key, text, "a mapping (a YAML object)", set_fix(key))]
            ) from None
    return text
