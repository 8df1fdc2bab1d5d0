"""Where each endpoint's pools can run, judged before anything reads it: every pinned group exists
and has a role of the endpoint's pools, every pool has groups to run on, and each DPD pool's
groups share one instance type (its role spec names one).

The checks after these (sizing, numbers, capacity, GPU types) read each pool's groups
(settings/endpoint/entries.py placement); the stack runs them only when these pass.
"""

from __future__ import annotations

from core.problems import ConfigProblem
from core.vocabulary import DPD_ROLES
from settings.cluster.groups import InstanceGroups, gpu_groups, groups_with_role
from settings.config.errors import full_key, set_fix
from settings.endpoint.entries import EndpointEntry, placement


def check_placed(listed: list[EndpointEntry], groups: InstanceGroups) -> list[ConfigProblem]:
    """Each endpoint's pins are groups of its pools' roles, and each pool has somewhere to run.
    A DPD pool without a group of its role, or a stack's only endpoint without a GPU group, is
    check_groups' (the stack lacks the role)."""
    problems = [p for entry in listed for p in _check_pins(entry, groups)]
    if problems:
        return problems
    alone = len(listed) == 1
    for entry in listed:
        for pool in entry.pools():
            if placement(entry, pool, groups, alone) or pool in DPD_ROLES or alone:
                continue
            problems.append(_unplaced_colocated(entry, groups))
    return problems


def _unplaced_colocated(entry: EndpointEntry, groups: InstanceGroups) -> ConfigProblem:
    """A colocated endpoint beside others runs only on groups of role colocated (its workers
    require those nodes by affinity: specs/placement.py), and the stack has none."""
    key = entry.config_key("mode")
    name = next(
        n for n in ("colocated", *(f"colocated-{i}" for i in range(2, 99))) if n not in groups
    )
    decoders = groups_with_role(groups, "decode") or gpu_groups(groups)
    kind = decoders[sorted(decoders)[0]].instance_type if decoders else "ml.p5.48xlarge"
    group = {"instanceType": kind, "instanceCount": entry.replicas("colocated", at="max"),
             "role": "colocated"}  # fmt: skip
    return ConfigProblem(
        key,
        "colocated",
        "a group of role colocated to run on: beside other endpoints, a colocated endpoint's "
        "workers run only on nodes of role colocated (a required node affinity), and no "
        f"instance group has that role (groups: {', '.join(sorted(groups))})",
        "add one: " + set_fix(full_key(("instanceGroups", name)), group),
    )


def _check_pins(entry: EndpointEntry, groups: InstanceGroups) -> list[ConfigProblem]:
    pinned = entry.config.groups
    if pinned is None:
        return []
    key = entry.config_key("groups")
    pools = entry.pools()
    fitting = sorted(n for n, g in groups.items() if g.role in pools)
    problems = []
    for name in pinned:
        group = groups.get(name)
        if group is None or group.role not in pools:
            what = "no such group" if group is None else f"a group of role {group.role}"
            problems.append(
                ConfigProblem(
                    key,
                    pinned,
                    f"instance group keys of role {' or '.join(pools)} ({name}: {what}); "
                    f"groups that fit: {', '.join(fitting) or 'none'}",
                    set_fix(key, [n for n in pinned if n in fitting] or fitting[:1])
                    + ", or add the group under hyperpod-dpd:instanceGroups",
                )
            )
    for pool in pools:
        # A group named twice is one group (settings/config/unique.py refuses the repeat).
        mine = list(dict.fromkeys(n for n in pinned if n in groups and groups[n].role == pool))
        if entry.config.mode == "dpd" and len(mine) > 1:
            problems.append(
                ConfigProblem(
                    key,
                    pinned,
                    f"at most one {pool} group: a DPD role's pods select their nodes by one "
                    f"nodeSelector ({', '.join(mine)} are all {pool})",
                    f"keep one {pool} group: "
                    + set_fix(key, [n for n in pinned if n not in mine[1:]]),
                )
            )
        elif not mine and not problems:
            problems.append(
                ConfigProblem(
                    key,
                    pinned,
                    f"a group for each of its pools ({', '.join(pools)}); none is {pool}",
                    f"add a {pool} group's key: "
                    + set_fix(key, [*pinned, *[n for n in fitting if groups[n].role == pool][:1]]),
                )
            )
    return problems


def check_pool_types(listed: list[EndpointEntry], groups: InstanceGroups) -> list[ConfigProblem]:
    """One instance type over the groups each DPD pool is placed on: the pool's role spec names
    one type and sizes its workers' requests for it. Judged per endpoint, so two endpoints
    pinned to groups of different types (p5 and p5e) each have one. A colocated pool on
    labelled groups selects them by affinity, which takes any mix."""
    alone = len(listed) == 1
    problems, seen = [], set()
    for entry in listed:
        for pool in entry.pools():
            if pool not in DPD_ROLES:
                continue
            kinds = {n: groups[n].instance_type for n in placement(entry, pool, groups, alone)}
            if len(set(kinds.values())) <= 1 or tuple(sorted(kinds)) in seen:
                continue
            seen.add(tuple(sorted(kinds)))
            problems.append(
                ConfigProblem(
                    full_key(("instanceGroups",)),
                    kinds,
                    f"one instance type over the {pool} groups {entry.label}'s {pool} pool runs "
                    f"on (its {pool} spec names one instance type; pin the endpoint with "
                    f"{entry.config_key('groups')} to one group per role to use several types)",
                    _same_type_fix(kinds, pool),
                )
            )
    return problems


def _same_type_fix(kinds: dict[str, str], role: str) -> str:
    """Every group of the pool on the type most of them (or the first, by name) have."""
    names = sorted(kinds)
    common = max(sorted(set(kinds.values())), key=lambda t: sum(v == t for v in kinds.values()))
    others = [n for n in names if kinds[n] != common]
    keys = " and ".join(full_key(("instanceGroups", n, "instanceType")) for n in others)
    return f"set {keys} to {common} (or give those groups another role than {role})"
