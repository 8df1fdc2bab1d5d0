"""The CrossGuard policies, built from policies/rules (the same functions the plan runs).

Kept apart from policies/__main__.py: constructing `PolicyPack` starts a gRPC server and blocks,
so tests import this module and call each policy's `validate` directly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    StackValidationArgs,
    StackValidationPolicy,
)

from policies.rules import ALL_RULES, Finding, Limits, ResourceView, Rule

LEVELS = {"mandatory": EnforcementLevel.MANDATORY, "advisory": EnforcementLevel.ADVISORY}

# Tunable limits, set per stack with `pulumi preview --policy-pack policies
# --policy-pack-config <file>` (see `hyperpod-dpd policy-config`).
CONFIG_SCHEMA = PolicyConfigSchema(
    properties={
        "minRoutingThreshold": {"type": "integer", "minimum": 0, "default": 256},
        "overheadGiB": {"type": "number", "minimum": 0, "default": 2.0},
        "minDenseParamsBillion": {"type": "number", "minimum": 0, "default": 70.0},
        "extraDpdImages": {"type": "array", "items": {"type": "string"}, "default": []},
    }
)


def limits_from(config: Mapping[str, Any]) -> Limits:
    defaults = Limits()
    return Limits(
        min_routing_threshold=int(
            config.get("minRoutingThreshold", defaults.min_routing_threshold)
        ),
        overhead_gib=float(config.get("overheadGiB", defaults.overhead_gib)),
        min_dense_params_billion=float(
            config.get("minDenseParamsBillion", defaults.min_dense_params_billion)
        ),
        extra_dpd_images=tuple(config.get("extraDpdImages", defaults.extra_dpd_images)),
    )


def views_of(args: StackValidationArgs) -> list[ResourceView]:
    return [ResourceView(r.resource_type, r.name, r.urn, r.props) for r in args.resources]


def _validator(rule: Rule, advisory_companion: bool):
    """The policy's validate: the rule's own findings, or only its advisory ones."""

    def keep(finding: Finding) -> bool:
        if advisory_companion:
            return finding.enforcement == "advisory"
        return finding.enforcement in (None, rule.enforcement)

    def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        for finding in rule.check(views_of(args), limits_from(args.get_config())):
            if keep(finding):
                report_violation(finding.message, finding.urn)

    return validate


def build_policies() -> list[StackValidationPolicy]:
    policies = []
    for rule in ALL_RULES:
        policies.append(
            StackValidationPolicy(
                name=rule.name,
                description=rule.description,
                enforcement_level=LEVELS[rule.enforcement],
                validate=_validator(rule, advisory_companion=False),
                config_schema=CONFIG_SCHEMA,
            )
        )
        if rule.advisory_findings:
            policies.append(
                StackValidationPolicy(
                    name=f"{rule.name}-advisory",
                    description=f"{rule.description} (assumed load)",
                    enforcement_level=EnforcementLevel.ADVISORY,
                    validate=_validator(rule, advisory_companion=True),
                    config_schema=CONFIG_SCHEMA,
                )
            )
    return policies


def pack_config(enforcement: Mapping[str, str], advisories_mandatory: bool) -> dict[str, Any]:
    """A `--policy-pack-config` document carrying a stack's enforcement choices."""
    config: dict[str, Any] = {}
    for policy in build_policies():
        base = policy.name.removesuffix("-advisory")
        level = enforcement.get(base) or policy.enforcement_level.value
        if advisories_mandatory and level == "advisory":
            level = "mandatory"
        config[policy.name] = {"enforcementLevel": level}
    return config
