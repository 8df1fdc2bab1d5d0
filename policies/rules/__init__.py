"""The rule set. Every rule is registered in ALL_RULES; the plan and the pack iterate it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from policies.rules.base import Enforcement, Finding, ResourceView, Rule, Violation

# Rules are added here by their modules (policies issue): one rule per module.
ALL_RULES: tuple[Rule, ...] = ()


def evaluate(
    resources: Sequence[ResourceView],
    rules: Sequence[Rule] = ALL_RULES,
    enforcement: Mapping[str, Enforcement] | None = None,
) -> list[Violation]:
    """Run `rules` over `resources`; `enforcement` overrides a rule's level per stack."""
    levels = dict(enforcement or {})
    violations = []
    for rule in rules:
        level = levels.get(rule.name, rule.enforcement)
        for finding in rule.check(resources):
            violations.append(Violation(rule.name, level, finding.urn, finding.message))
    return sorted(violations, key=lambda v: (v.enforcement != "mandatory", v.policy, v.urn))


__all__ = ["ALL_RULES", "Enforcement", "Finding", "ResourceView", "Rule", "Violation", "evaluate"]
