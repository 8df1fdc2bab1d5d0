"""Several endpoints per stack: the `endpoints` map (or the one `endpoint`), where each runs, the
GPUs they can claim together, their autoscaling and the traffic split in front of them.

A stack sets `hyperpod-dpd:endpoint` (one endpoint, its resources named as they always were) or
`hyperpod-dpd:endpoints` (a map keyed like instanceGroups: each key's resources are named after
it, so adding or removing one endpoint never renames another's), never both.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from core.gpu_types import gpus_per_node
from core.problems import ConfigProblem
from core.vocabulary import DPD_ROLES, endpoint_config_path, endpoint_resource_name
from settings.cluster import InstanceGroups, gpu_groups, groups_with_role
from settings.endpoint import AutoscalingConfig, EndpointConfig, ScalingConfig
from settings.endpoint_names import check_unique_deployments, check_unique_names
from settings.errors import full_key, set_fix
from settings.numbers import EffectiveNumbers, effective_numbers
from settings.scaling_signal import check_signal


@dataclass(frozen=True)
class EndpointEntry:
    """One endpoint of the stack: its key in `endpoints` (None: the single `endpoint`)."""

    key: str | None
    config: EndpointConfig

    @property
    def path(self) -> tuple[str, ...]:
        """Where its keys live: ('endpoint',) or ('endpoints', key)."""
        return endpoint_config_path(self.resource_name)

    def config_key(self, *rest: str) -> str:
        return full_key((*self.path, *rest))

    @property
    def resource_name(self) -> str:
        """The name of its component (and the prefix of its resources' names)."""
        return endpoint_resource_name(self.key)

    @property
    def label(self) -> str:
        return self.key or self.config.name

    @cached_property
    def numbers(self) -> EffectiveNumbers:
        """What its pools run with, each number with the key it came from (settings/numbers.py):
        reconciled once per entry, read by every check and reader after."""
        return effective_numbers(self)

    def pools(self) -> tuple[str, ...]:
        """The worker pools it runs: prefill and decode, or one colocated pool."""
        return DPD_ROLES if self.config.mode == "dpd" else ("colocated",)

    def replicas(self, pool: str, at: str = "fixed") -> int:
        """Replicas of `pool`: the fixed count, or with `at` "min" / "max" the autoscaler's
        bound (the fixed count where it has none)."""
        e = self.config
        scaling = scaling_of(e, pool)
        if at == "max" and scaling is not None and scaling.max_replicas is not None:
            return scaling.max_replicas
        if at == "min" and scaling is not None:
            return scaling.min_replicas
        if pool == "colocated":
            # Its own count, or the GPU budget of DPD's two pools (a fair A/B).
            return e.replicas or e.prefill.replicas + e.decode.replicas
        return getattr(e, pool).replicas


def scaling_of(e: EndpointConfig, pool: str) -> ScalingConfig | None:
    """The autoscaling of one pool of `e` (colocated: the endpoint's own fields)."""
    a = e.autoscaling
    if a is None:
        return None
    if pool == "colocated":
        return a if a.max_replicas is not None else None
    return getattr(a, pool)


def entries(
    endpoint: EndpointConfig, endpoints: Mapping[str, EndpointConfig]
) -> list[EndpointEntry]:
    """The stack's endpoints, by key (the single `endpoint` when the map is empty)."""
    if not endpoints:
        return [EndpointEntry(None, endpoint)]
    return [EndpointEntry(key, endpoints[key]) for key in sorted(endpoints)]


def placement(entry: EndpointEntry, pool: str, groups: InstanceGroups, alone: bool) -> list[str]:
    """The instance groups `pool` of `entry` can run on: its pinned groups of the pool's role, or
    every group of that role. A colocated pool with no `colocated` group runs, as one stack's
    only endpoint, on any GPU group (how colocated stacks always ran)."""
    candidates = groups_with_role(groups, pool)
    if pool == "colocated" and not candidates and alone:
        candidates = gpu_groups(groups)
    pinned = entry.config.groups
    if pinned is not None:
        candidates = {n: g for n, g in candidates.items() if n in pinned}
    return sorted(candidates)


# --- checks ---------------------------------------------------------------------------------


def check_endpoints(
    endpoint: EndpointConfig,
    endpoint_given: bool,
    endpoints: Mapping[str, EndpointConfig],
    groups: InstanceGroups,
) -> list[ConfigProblem]:
    """One way to declare endpoints; each pinned group exists and fits; autoscaling is whole; no
    group is promised more GPUs than it has, at every endpoint's maximum replicas (one endpoint
    at fixed replicas: the role-capacity policy judges that, as it always has); no two render
    the same Kubernetes names (settings/endpoint_names.py)."""
    if endpoint_given and endpoints:
        key = full_key(("endpoints",))
        return [
            ConfigProblem(
                key,
                sorted(endpoints),
                "either hyperpod-dpd:endpoint (one endpoint) or hyperpod-dpd:endpoints (a map "
                "keyed by endpoint name), not both",
                "move the endpoint under hyperpod-dpd:endpoints.<name> (its resources are then "
                "named endpoint-<name>) or remove hyperpod-dpd:endpoints",
            )
        ]
    all_entries = entries(endpoint, endpoints)
    problems = [p for entry in all_entries for p in _check_pins(entry, groups)]
    problems += [p for entry in all_entries for p in _check_scaling(entry)]
    scaled = any(entry.config.autoscaling is not None for entry in all_entries)
    if not problems and (len(all_entries) > 1 or scaled):
        problems += _check_gpu_budget(all_entries, groups)
    return problems + check_unique_names(endpoints) + check_unique_deployments(endpoints)


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
        mine = [n for n in pinned if n in groups and groups[n].role == pool]
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


def _check_scaling(entry: EndpointEntry) -> list[ConfigProblem]:
    e, problems = entry.config, []
    a = e.autoscaling
    if a is None:
        return []
    dpd = e.mode == "dpd"
    own = a.max_replicas is not None or a.target is not None
    if dpd and (own or (a.prefill is None and a.decode is None)):
        key = entry.config_key("autoscaling")
        problems.append(
            ConfigProblem(
                key,
                "maxReplicas/target at the endpoint" if own else "no pool",
                "for mode dpd, autoscaling per role: prefill and/or decode, each with its own "
                "minReplicas, maxReplicas, metric or query, target",
                "each pool scales on its own signal: " + set_fix(key, _per_role(a)),
            )
        )
    if not dpd and (a.prefill is not None or a.decode is not None or a.max_replicas is None):
        key = entry.config_key("autoscaling")
        problems.append(
            ConfigProblem(
                key,
                "prefill/decode" if a.prefill or a.decode else "no maxReplicas",
                "for mode colocated, one pool: minReplicas, maxReplicas, metric or query, target",
                "prefill and decode are DPD's pools: " + set_fix(key, _one_pool(a)),
            )
        )
    if problems:
        return problems
    for pool in entry.pools():
        scaling = scaling_of(e, pool)
        if scaling is None:
            continue
        key = entry.config_key("autoscaling", *(() if pool == "colocated" else (pool,)))
        if scaling.max_replicas is not None and scaling.min_replicas > scaling.max_replicas:
            problems.append(
                ConfigProblem(
                    f"{key}.minReplicas",
                    scaling.min_replicas,
                    f"at most maxReplicas ({scaling.max_replicas})",
                    f"{set_fix(f'{key}.minReplicas', scaling.max_replicas)}, or raise "
                    f"{key}.maxReplicas",
                )
            )
        if (scaling.metric is None) == (scaling.query is None):
            problems.append(
                ConfigProblem(
                    key,
                    "both metric and query" if scaling.metric else "neither metric nor query",
                    "one signal: metric (waiting-requests, running-requests, kv-cache-usage) or "
                    "query (PromQL)",
                    _signal_fix(key, scaling, pool),
                )
            )
        if scaling.target is None:
            problems.append(
                ConfigProblem(
                    f"{key}.target",
                    None,
                    "the value per replica to hold the signal at",
                    f"set {key}.target to the signal per replica, e.g. "
                    f"{'5' if pool == 'prefill' else '16'}",
                )
            )
        if (scaling.metric is None) != (scaling.query is None):
            problems += check_signal(e, pool, scaling, key, entry.config_key("name"))
    return problems


def _signal_fix(key: str, scaling: ScalingConfig, pool: str) -> str:
    """One signal: drop the query when both are set, else name the pool's usual metric."""
    if scaling.metric is not None:
        return f"remove {key}.query (or {key}.metric)"
    metric = "waiting-requests" if pool == "prefill" else "running-requests"
    return f"set {key}.metric to {metric}"


def _scaling_dict(scaling: ScalingConfig | None) -> dict:
    return {} if scaling is None else scaling.model_dump(by_alias=True, exclude_none=True)


# What a pool scales on when the stack names nothing (a first setting the user then tunes): the
# queue for prefill, running sequences for decode and colocated; a target per replica of each.
_USUAL_SIGNAL = {"prefill": ("waiting-requests", 5), "decode": ("running-requests", 16)}


def _complete(written: dict, pool: str) -> dict:
    """`written` with what a pool cannot go without: maxReplicas, a signal and its target."""
    metric, target = _USUAL_SIGNAL["prefill" if pool == "prefill" else "decode"]
    out = dict(written)
    out.setdefault("maxReplicas", max(2, out.get("minReplicas", 1)))
    if "metric" not in out and "query" not in out:
        out["metric"] = metric
    out.setdefault("target", target)
    return out


def _per_role(a: AutoscalingConfig) -> dict:
    """A DPD endpoint's autoscaling as its two pools, each from what was written."""
    shared = {k: v for k, v in _scaling_dict(a).items() if k not in DPD_ROLES}
    return {
        role: _complete({**shared, **_scaling_dict(getattr(a, role))}, role) for role in DPD_ROLES
    }


def _one_pool(a: AutoscalingConfig) -> dict:
    """A colocated endpoint's autoscaling as one pool: what was written for it, else the decode
    pool's, else the prefill's."""
    shared = {k: v for k, v in _scaling_dict(a).items() if k not in DPD_ROLES}
    return _complete({**_scaling_dict(a.prefill), **_scaling_dict(a.decode), **shared}, "decode")


def _budget_fix(where: set[str], groups: InstanceGroups, short: int) -> str:
    """Add the missing nodes to the largest of the groups (or lower maxReplicas or replicas, or
    pin the endpoints to other groups)."""
    name = max(sorted(where), key=lambda n: groups[n].instance_count)
    key = full_key(("instanceGroups", name, "instanceCount"))
    return (
        f"{set_fix(key, groups[name].instance_count + short)}; or lower maxReplicas or replicas, "
        "or pin the endpoints to other groups (endpoints.<name>.groups)"
    )


def _check_gpu_budget(
    all_entries: list[EndpointEntry], groups: InstanceGroups
) -> list[ConfigProblem]:
    """Each worker owns a node (it requests all its GPUs): the endpoints' pools that can land on
    one set of groups must fit its nodes at their maximum replicas. Pools sharing any group are
    judged together (they compete for the same nodes)."""
    alone = len(all_entries) <= 1
    demands = []  # (groups, entry, pool, nodes)
    for entry in all_entries:
        for pool in entry.pools():
            where = placement(entry, pool, groups, alone)
            demands.append((set(where), entry, pool, entry.replicas(pool, at="max")))
    # Join pools whose groups overlap, until the sets are disjoint.
    clusters: list[tuple[set[str], list]] = []
    for where, entry, pool, nodes in demands:
        merged = [c for c in clusters if c[0] & where]
        members = [(entry, pool, nodes)]
        for c in merged:
            clusters.remove(c)
            where = where | c[0]
            members = c[1] + members
        clusters.append((where, members))
    problems = []
    for where, members in clusters:
        if not where:
            continue
        have_nodes = sum(groups[n].instance_count for n in where)
        want_nodes = sum(nodes for _, _, nodes in members)
        if want_nodes <= have_nodes:
            continue
        per_node = max(gpus_per_node(groups[n].instance_type) for n in where)
        claims = ", ".join(
            f"{entry.label} {pool} {nodes} x {per_node} GPUs" for entry, pool, nodes in members
        )
        problems.append(
            ConfigProblem(
                full_key(("instanceGroups",)),
                {n: groups[n].instance_count for n in sorted(where)},
                f"room for every endpoint at its maximum replicas: groups {', '.join(sorted(where))} "
                f"have {have_nodes * per_node} GPUs ({have_nodes} nodes), the endpoints can claim "
                f"{want_nodes * per_node} ({claims})",
                _budget_fix(where, groups, want_nodes - have_nodes),
            )
        )
    return problems
