"""Policy enforcement: per-rule overrides and stricter advisories, and the check of rule names."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from core.problems import ConfigProblem
from core.vocabulary import RULE_NAMES
from settings.errors import full_key
from settings.fields import SettingsModel

PolicyLevel = Literal["mandatory", "advisory", "disabled"]


class PolicyConfig(SettingsModel):
    enforcement: dict[str, PolicyLevel] = Field(
        default_factory=dict,
        description="Per-rule enforcement override, e.g. {hyperpod-dpd-shm-volume: mandatory}.",
    )
    advisories_mandatory: bool = Field(
        False, description="Treat every advisory rule as mandatory (stricter stacks, e.g. prod)."
    )


def check_policy_names(policy: PolicyConfig) -> list[ConfigProblem]:
    """Enforcement overrides name rules that exist."""
    problems = []
    for name in policy.enforcement:
        if name not in RULE_NAMES:
            key = full_key(("policy", "enforcement", name))
            problems.append(
                ConfigProblem(
                    key, name, "a rule name: " + ", ".join(sorted(RULE_NAMES)), "fix the rule name"
                )
            )
    return problems
