"""Where an endpoint's pools run: the nodes of their instance groups, told to the operator.

A DPD role selects its nodes by labels (`pdSpec.<role>Spec.nodeSelector`): the role's label, and
the group's when the endpoint is pinned to one (`endpoints.<key>.groups`), so two endpoints
sharing a role land on their own groups. A colocated endpoint on groups of role `colocated`
requires them by node affinity (the CRD's `nodeAffinity`, exclusive with instanceType(s)); one
stack's only colocated endpoint with no such group runs, as colocated endpoints always have, on
any GPU group of its instance types. The nodes carry both labels (specs/hyperpod.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.vocabulary import DPD_ROLES, GROUP_LABEL, ROLE_LABEL, role_node_selector
from settings.cluster.groups import instance_type_for
from settings.endpoint.entries import EndpointEntry, placement
from settings.stack import StackSettings


@dataclass(frozen=True)
class EndpointPlacement:
    instance_types: tuple[str, ...]  # every type its pods may land on
    pool_types: dict[str, str]  # pool -> the instance type its resources are sized for
    selectors: dict[str, dict[str, str]]  # DPD role -> nodeSelector
    affinity: dict[str, Any] | None = None  # colocated on labelled groups
    # pool -> every type its pods may land on (its groups'): the workers' requests fit them all
    pool_kinds: dict[str, tuple[str, ...]] = field(default_factory=dict)


def placement_of(s: StackSettings, entry: EndpointEntry) -> EndpointPlacement:
    groups = s.instance_groups
    alone = len(s.entries()) == 1
    where = {pool: placement(entry, pool, groups, alone) for pool in entry.pools()}
    pinned = entry.config.groups is not None
    types = tuple(sorted({groups[n].instance_type for names in where.values() for n in names}))
    labelled = [n for n in where.get("colocated", []) if groups[n].role == "colocated"]
    pool_types = {}
    for pool, names in where.items():
        if names:
            # The role's group first (colocated off labelled groups: the decode group's type, as
            # colocated endpoints have always been sized).
            role = pool if pool != "colocated" or labelled else "decode"
            pool_types[pool] = instance_type_for({n: groups[n] for n in names}, role)
    selectors = {}
    for role in DPD_ROLES if entry.config.mode == "dpd" else ():
        selector = role_node_selector(role)
        if pinned and where[role]:
            selector = {**selector, GROUP_LABEL: where[role][0]}
        selectors[role] = selector
    affinity = None
    if labelled:
        terms = [{"key": ROLE_LABEL, "operator": "In", "values": ["colocated"]}]
        if pinned:
            terms.append({"key": GROUP_LABEL, "operator": "In", "values": labelled})
        affinity = {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": terms}]
            }
        }
    kinds = {
        pool: tuple(sorted({groups[n].instance_type for n in names}))
        for pool, names in where.items()
        if names
    }
    return EndpointPlacement(types, pool_types, selectors, affinity, kinds)
