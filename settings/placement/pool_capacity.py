"""Whether every pool of every endpoint has nodes at its maximum replicas, counted on exactly the
groups it can be scheduled on (settings/endpoint/entries.py placement: its pinned group, its role's
groups, a colocated pool's labelled groups).

Each worker owns a node: it requests all of the node's GPUs (core/sizing/gpu_types.py), so a pool at n
replicas needs n nodes of its groups, and a replica beyond them stays Pending
(https://kubernetes.io/docs/concepts/scheduling-eviction/kube-scheduler/). Pools that share groups
compete for them, so the rule is Hall's: for every set of groups U, the pools that can run only
on groups of U must fit U's nodes. A pinned pool's shortfall on its group is then never hidden by
another group's spare nodes, which only the unpinned pools can use.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from core.problems import ConfigProblem
from settings.cluster.groups import InstanceGroups
from settings.config.errors import full_key, set_fix
from settings.endpoint.entries import EndpointEntry, placement, scaling_of


@dataclass(frozen=True)
class Demand:
    entry: EndpointEntry
    pool: str
    groups: frozenset[str]  # where it can be scheduled
    nodes: int  # its maximum replicas: one node each

    @property
    def replicas_key(self) -> str:
        """The key that sets the pool's maximum replicas."""
        e = self.entry
        scaling = scaling_of(e.config, self.pool)
        if scaling is not None and scaling.max_replicas is not None:
            where = () if self.pool == "colocated" else (self.pool,)
            return e.config_key("autoscaling", *where, "maxReplicas")
        return e.config_key(*(() if self.pool == "colocated" else (self.pool,)), "replicas")

    def describe(self) -> str:
        return f"{self.entry.label} {self.pool} {self.nodes} ({self.replicas_key})"


def check_pool_capacity(listed: list[EndpointEntry], groups: InstanceGroups) -> list[ConfigProblem]:
    """One problem per smallest set of groups whose nodes cannot hold the pools confined to it."""
    alone = len(listed) == 1
    demands = [
        Demand(x, pool, frozenset(placement(x, pool, groups, alone)), x.replicas(pool, at="max"))
        for x in listed
        for pool in x.pools()
    ]
    demands = [d for d in demands if d.groups]  # unplaced: settings/placement/pools.py check_placed
    reported: list[frozenset[str]] = []
    problems = []
    for where in _unions({d.groups for d in demands}):
        if any(r <= where for r in reported):
            continue  # a smaller set already short: fix that first
        confined = [d for d in demands if d.groups <= where]
        have = sum(groups[n].instance_count for n in where)
        want = sum(d.nodes for d in confined)
        if want > have:
            reported.append(where)
            problems.append(_problem(where, confined, groups, have, want))
    return problems


def _unions(sets: set[frozenset[str]]) -> list[frozenset[str]]:
    """Every union of some of `sets`, smallest first (few: a stack has a few pools)."""
    distinct = sorted(sets, key=sorted)
    out = {frozenset().union(*c) for k in range(1, len(distinct) + 1)
           for c in combinations(distinct, k)}  # fmt: skip
    return sorted(out, key=lambda u: (len(u), sorted(u)))


def _problem(
    where: frozenset[str], confined: list[Demand], groups: InstanceGroups, have: int, want: int
) -> ConfigProblem:
    names = sorted(where)
    largest = max(names, key=lambda n: groups[n].instance_count)
    count_key = full_key(("instanceGroups", largest, "instanceCount"))
    if len(names) == 1:
        key, value, which = count_key, have, f"group {names[0]}"
    else:
        key = full_key(("instanceGroups",))
        value = {n: groups[n].instance_count for n in names}
        which = f"groups {', '.join(names)}"
    pools = "; ".join(d.describe() for d in confined)
    return ConfigProblem(
        key,
        value,
        f"nodes for every pool that can run only on {which}, at its maximum replicas (one "
        f"worker per node: it requests all the node's GPUs): {which} "
        f"{'has' if len(names) == 1 else 'have'} {have} node{'s' * (have != 1)}, the pools want {want} ({pools}); "
        f"{want - have} replicas would stay Pending",
        f"{set_fix(count_key, groups[largest].instance_count + want - have)}; or lower "
        f"{' or '.join(d.replicas_key for d in confined)}",
    )
