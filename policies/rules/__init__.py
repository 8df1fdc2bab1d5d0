"""The rule set. Every rule is registered in ALL_RULES; the gate, the plan and the pack
iterate it. One rule per module; each module's RULE is the unit its tests exercise."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from policies.rules import cold_start, sns_topics, traffic_tls
from policies.rules.base import Enforcement, Finding, Limits, ResourceView, Rule, Violation
from policies.rules.cluster import efa, instance_type, operator_version, single_az
from policies.rules.endpoint import (
    autoscaling_capacity,
    gpu_memory,
    hash_seed,
    image_known_issues,
    model_size,
    pd_buffer_capacity,
    pd_buffer_fits,
    role_capacity,
    routing_strategy,
    routing_threshold,
    shm_volume,
    tensor_parallel,
)
from policies.rules.security import (
    boot_scripts,
    eks_endpoint,
    hf_token,
    iam_wildcards,
    image,
    images_by_digest,
    pod_ingress,
    public_ingress,
    s3_buckets,
)

ALL_RULES: tuple[Rule, ...] = tuple(
    m.RULE
    for m in (
        instance_type,
        single_az,
        efa,
        gpu_memory,
        pd_buffer_fits,
        pd_buffer_capacity,
        hash_seed,
        image,
        image_known_issues,
        routing_threshold,
        tensor_parallel,
        operator_version,
        role_capacity,
        routing_strategy,
        model_size,
        shm_volume,
        s3_buckets,
        boot_scripts,
        sns_topics,
        iam_wildcards,
        public_ingress,
        eks_endpoint,
        hf_token,
        cold_start,
        autoscaling_capacity,
        traffic_tls,
        pod_ingress,
        images_by_digest,
    )
)
RULE_NAMES = frozenset(r.name for r in ALL_RULES)


def evaluate(
    resources: Sequence[ResourceView],
    rules: Sequence[Rule] = ALL_RULES,
    enforcement: Mapping[str, str] | None = None,
    advisories_mandatory: bool = False,
    limits: Limits | None = None,
) -> list[Violation]:
    """Run `rules`; `enforcement` overrides a rule's level per stack ("disabled" skips it), and
    `advisories_mandatory` makes every rule without its own override mandatory. A locked rule
    keeps its own level whatever the overrides say (the settings refuse such an override)."""
    levels = dict(enforcement or {})
    violations = []
    for rule in rules:
        override = None if rule.locked else levels.get(rule.name)
        if override == "disabled":
            continue
        for finding in rule.check(resources, limits or Limits()):
            if finding.unchecked:
                continue  # not a violation; the pack reports these (policies/pack.py)
            level = override or finding.enforcement or rule.enforcement
            if advisories_mandatory and override is None:  # a rule's own level wins, as in diff
                level = "mandatory"
            violations.append(Violation(rule.name, level, finding.urn, finding.message))
    return sorted(violations, key=lambda v: (v.enforcement != "mandatory", v.policy, v.urn))


__all__ = [
    "ALL_RULES",
    "RULE_NAMES",
    "Enforcement",
    "Finding",
    "Limits",
    "ResourceView",
    "Rule",
    "Violation",
    "evaluate",
]
