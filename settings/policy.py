"""Policy enforcement: per-rule overrides and stricter advisories, and the check of rule names."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from core.problems import ConfigProblem
from core.vocabulary import DIFF_RULE_NAMES, LOCKED_RULE_NAMES, RULE_NAMES
from settings.config.errors import full_key
from settings.config.fields import SettingsModel

PolicyLevel = Literal["mandatory", "advisory", "disabled"]


class PolicyConfig(SettingsModel):
    enforcement: dict[str, PolicyLevel] = Field(
        default_factory=dict,
        description="Per-rule enforcement override, e.g. {hyperpod-dpd-shm-volume: mandatory}. "
        "Also hyperpod-dpd-coherent-change, which `hyperpod-dpd diff` judges (an in-place change "
        "of a DPD endpoint that its two pools roll separately): mandatory makes diff exit 1.",
    )
    advisories_mandatory: bool = Field(
        False,
        description="Treat every advisory rule as mandatory (stricter stacks, e.g. prod), "
        "hyperpod-dpd-coherent-change of `hyperpod-dpd diff` included; a rule given its own "
        "level in enforcement keeps that level.",
    )

    def diff_rule_level(self, name: str) -> PolicyLevel:
        """The level of a rule `hyperpod-dpd diff` judges (core/vocabulary.py DIFF_RULE_NAMES):
        its own override, else mandatory with advisoriesMandatory, else advisory."""
        own = self.enforcement.get(name)
        if own is not None:
            return own
        return "mandatory" if self.advisories_mandatory else "advisory"


def check_policy_names(policy: PolicyConfig) -> list[ConfigProblem]:
    """Enforcement overrides name rules that exist, and lower no locked rule."""
    problems = []
    for name, level in policy.enforcement.items():
        if name in LOCKED_RULE_NAMES and level != "mandatory":
            key = full_key(("policy", "enforcement", name))
            problems.append(
                ConfigProblem(
                    key,
                    level,
                    "mandatory: this rule holds on every stack and cannot be lowered",
                    f"pulumi config rm --path '{key}'; a deploy that cannot reach a private "
                    "EKS API runs on a runner inside the VPC (docs/deploy.md, 'A runner that "
                    "reaches the private API')",
                )
            )
            continue
        if name not in RULE_NAMES and name not in DIFF_RULE_NAMES:
            key = full_key(("policy", "enforcement", name))
            problems.append(
                ConfigProblem(
                    key,
                    name,
                    "a rule name: " + ", ".join(sorted({*RULE_NAMES, *DIFF_RULE_NAMES})),
                    "fix the rule name",
                )
            )
    return problems
