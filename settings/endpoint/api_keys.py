"""The names of the traffic split's API keys (never the keys: each is generated): how many one
listener rule compares, their form, and their check."""

from __future__ import annotations

import re

from core.aws.aws_rules import (
    ALB_CONDITION_VALUES_MAX,
)
from core.problems import ConfigProblem
from settings.config.errors import full_key, set_fix

# The split's API keys are held in one http-header condition of its listener rule, which compares
# at most ALB_CONDITION_VALUES_MAX values (core/aws/aws_rules.py): the key clients use, the next
# one and the one before, while a rotation is under way.
API_KEYS_MAX = ALB_CONDITION_VALUES_MAX
# A key's name (not the key: each is generated, specs/traffic/keys.py): it names its resource.
API_KEY_NAME_PATTERN = r"^[a-z0-9]([-a-z0-9]{0,14}[a-z0-9])?$"
FIRST_API_KEY = "first"


def check_api_key_names(names: list[str]) -> list[ConfigProblem]:
    """Distinct names of the key-name form, one to API_KEYS_MAX of them. A name that is not of
    that form is not shown: it may be a key pasted where its name belongs."""
    key = full_key(("trafficListener", "apiKeyNames"))
    bad = [
        ConfigProblem(
            f"{key}[{i}]",
            f"<{len(name)} characters, not shown: it may be a key>",
            "the name of a key, never a key (the stack generates each key): lowercase letters, "
            "digits and '-', at most 16 characters, such as first or 2027-01",
            set_fix(
                key, [n if re.fullmatch(API_KEY_NAME_PATTERN, n) else FIRST_API_KEY for n in names]
            )
            + " (a name in its place); if it was a key, it stays in this file's history: "
            "use it nowhere",
        )
        for i, name in enumerate(names)
        if not isinstance(name, str) or not re.fullmatch(API_KEY_NAME_PATTERN, name)
    ]
    if bad:
        return bad
    kept = list(dict.fromkeys(names))
    if len(kept) != len(names):
        repeated = sorted({n for n in names if names.count(n) > 1})
        return [
            ConfigProblem(
                key,
                names,
                f"distinct names ({', '.join(repeated)} is given more than once): each names "
                "one generated key",
                set_fix(key, kept),
            )
        ]
    if not 1 <= len(names) <= API_KEYS_MAX:
        fix = [FIRST_API_KEY] if not names else names[-API_KEYS_MAX:]
        return [
            ConfigProblem(
                key,
                names,
                f"1 to {API_KEYS_MAX} key names ({len(names)} here): the listener forwards "
                "only requests that carry one of the keys (no name, no request would pass), "
                f"and one header condition of an ALB rule compares at most {API_KEYS_MAX} "
                "values (ELB User Guide, condition types for listener rules)",
                set_fix(key, fix) + (" (the newest kept)" if names else ""),
            )
        ]
    return []
