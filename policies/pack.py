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
from pulumi_policy.proxy import (
    UNKNOWN_ARCHIVE_VALUE,
    UNKNOWN_ARRAY_VALUE,
    UNKNOWN_ASSET_VALUE,
    UNKNOWN_BOOLEAN_VALUE,
    UNKNOWN_NUMBER_VALUE,
    UNKNOWN_OBJECT_VALUE,
    UNKNOWN_STRING_VALUE,
    _DictProxy,
    _ListProxy,
)

from core.pulumi_commands import naming_stack
from core.vocabulary import LOCKED_RULE_NAMES, urn_stack
from policies.rules import ALL_RULES, Finding, Limits, ResourceView, Rule
from policies.rules.views import UNKNOWN

# The engine's sentinels for values not known during preview (pulumi-policy proxy.py).
_SENTINELS = frozenset(
    {
        UNKNOWN_BOOLEAN_VALUE,
        UNKNOWN_NUMBER_VALUE,
        UNKNOWN_STRING_VALUE,
        UNKNOWN_ARRAY_VALUE,
        UNKNOWN_ASSET_VALUE,
        UNKNOWN_ARCHIVE_VALUE,
        UNKNOWN_OBJECT_VALUE,
    }
)
# Reports what the rules could not judge because a value is unknown until a resource exists
# (a first preview). Always advisory: a preview cannot fail for what it cannot know, and the
# program's own gate judged those values (as placeholders) before anything was registered.
UNCHECKED_POLICY = "hyperpod-dpd-preview-unchecked"

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


def plain(value: Any) -> Any:
    """What the engine sent, as the rules read it: pulumi-policy's unknown-checking proxies
    unwrapped (their raw targets are read, so nothing raises), the engine's unknown sentinels
    as "[unknown]", and whole numbers as ints (a protobuf Struct carries every number as a
    double: 100 arrives as 100.0).

    Every policy of the pack walks every resource's inputs through here on each preview, so
    the common types are matched exactly before the general (and slower, ABC) checks."""
    kind = type(value)
    if kind is _DictProxy or kind is _ListProxy:
        value = value["__target"]
        kind = type(value)
    if kind is dict:
        return {k: plain(v) for k, v in value.items()}
    if kind is list:
        return [plain(v) for v in value]
    if kind is str:
        return UNKNOWN if value in _SENTINELS else value
    if kind is float:
        return int(value) if value.is_integer() else value
    if kind is bool or kind is int or value is None:
        return value
    if kind.__module__ == "pulumi_policy.proxy":  # another proxy: read its target, never raise
        return plain(value["__target"])
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, str) and value in _SENTINELS:
        return UNKNOWN
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def views_of(args: StackValidationArgs) -> list[ResourceView]:
    return [ResourceView(r.resource_type, r.name, r.urn, plain(r.props)) for r in args.resources]


def _validator(rule: Rule, advisory_companion: bool):
    """The policy's validate: the rule's own findings, or only its advisory ones."""

    def keep(finding: Finding) -> bool:
        if finding.unchecked:
            return False  # UNCHECKED_POLICY reports these
        if advisory_companion:
            return finding.enforcement == "advisory"
        return finding.enforcement in (None, rule.enforcement)

    def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        for finding in rule.check(views_of(args), limits_from(args.get_config())):
            if keep(finding):
                _report(report_violation, finding.message, finding.urn)

    return validate


def _unchecked(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    views, limits = views_of(args), limits_from(args.get_config())
    for rule in ALL_RULES:
        for finding in rule.check(views, limits):
            if finding.unchecked:
                _report(report_violation, f"{rule.name}: {finding.message}", finding.urn)


def _report(report_violation: ReportViolation, message: str, urn: str | None) -> None:
    """A finding, its fix's Pulumi commands naming the stack previewed (its resources' URNs say
    which), as the plan's gate names them: without `--stack` they act on whichever is selected."""
    if urn:
        message = naming_stack(message, urn_stack(urn))
    report_violation(message, urn)


def build_policies() -> list[StackValidationPolicy]:
    policies = [
        StackValidationPolicy(
            name=UNCHECKED_POLICY,
            description="What the rules cannot judge during a first preview (values unknown)",
            enforcement_level=EnforcementLevel.ADVISORY,
            validate=_unchecked,
            config_schema=CONFIG_SCHEMA,
        )
    ]
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
        if policy.name == UNCHECKED_POLICY:
            config[policy.name] = {"enforcementLevel": "advisory"}  # never blocks a preview
            continue
        base = policy.name.removesuffix("-advisory")
        own = None if base in LOCKED_RULE_NAMES else enforcement.get(base)
        level = own or policy.enforcement_level.value
        if advisories_mandatory and own is None and level == "advisory":
            level = "mandatory"
        config[policy.name] = {"enforcementLevel": level}
    return config
