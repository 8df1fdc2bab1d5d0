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

from core.problems import ConfigProblem
from core.vocabulary import DPD_ROLES, endpoint_config_path, endpoint_resource_name
from settings.cluster.groups import InstanceGroups, gpu_groups, groups_with_role
from settings.config.errors import full_key, set_fix
from settings.endpoint.autoscaling import AutoscalingConfig, ScalingConfig
from settings.endpoint.model import EndpointConfig
from settings.endpoint.names import check_unique_deployments, check_unique_names
from settings.endpoint.numbers import EffectiveNumbers, effective_numbers
from settings.endpoint.scaling_pair import check_pair
from settings.endpoint.scaling_signal import check_signal


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
        """What its pools run with, each number with the key it came from (settings/endpoint/numbers.py):
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
) -> list[ConfigProblem]:
    """One way to declare endpoints; autoscaling is whole; no two render the same Kubernetes
    names (settings/endpoint/names.py). Where they run is settings/placement/pools.py's, whether it has
    room settings/placement/pool_capacity.py's."""
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
    problems = [p for entry in all_entries for p in _check_scaling(entry)]
    return problems + check_unique_names(endpoints) + check_unique_deployments(endpoints)


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
    pools_given = a.prefill is not None or a.decode is not None or a.ratio is not None
    if not dpd and (pools_given or a.max_replicas is None):
        key = entry.config_key("autoscaling")
        problems.append(
            ConfigProblem(
                key,
                "prefill/decode/ratio" if pools_given else "no maxReplicas",
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
            numbers = None if entry.numbers.problems else entry.numbers.pools.get(pool)
            problems += check_signal(e, pool, scaling, key, entry.config_key("name"), numbers)
    if dpd:
        problems += check_pair(e, entry.config_key("autoscaling"), entry.config_key("name"))
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
    shared = {k: v for k, v in _scaling_dict(a).items() if k not in (*DPD_ROLES, "ratio")}
    return {
        role: _complete({**shared, **_scaling_dict(getattr(a, role))}, role) for role in DPD_ROLES
    }


def _one_pool(a: AutoscalingConfig) -> dict:
    """A colocated endpoint's autoscaling as one pool: what was written for it, else the decode
    pool's, else the prefill's."""
    shared = {k: v for k, v in _scaling_dict(a).items() if k not in (*DPD_ROLES, "ratio")}
    return _complete({**_scaling_dict(a.prefill), **_scaling_dict(a.decode), **shared}, "decode")
