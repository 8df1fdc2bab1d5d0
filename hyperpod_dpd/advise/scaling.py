"""A layout's autoscaling from the SLO: each pool's target (hyperpod_dpd/advise/capacity.py), its
replicas within the groups' nodes, and a DPD layout's prefill:decode ratio kept as a pair
(settings/endpoint/scaling_pair.py): the JSON of the recommendation and the keys `--write` sets.

Replicas: each worker owns a node, so a pool scales within the nodes of its groups. Where advise
sizes the groups (the stack's one `endpoint`, or no stack) they get the layout's nodes, the
layout being sized for the peak load asked; an endpoint of an `endpoints` map has the nodes its
groups have that the other endpoints' pools do not claim at their maxima, and at least the
layout's (a group with fewer is grown: hyperpod_dpd/advise/setting.py). A pool scales down to
1 (the follower of a pair to its share of one leader replica): below the peak, fewer replicas hold
the load within the SLO, and the nodes they leave serve another endpoint of the groups.

Scale-in waits for as long as a new worker takes to start (core/cold_start.py, as the endpoint's
caches have it; the cold-start rule's test: policies/rules/cold_start.py): a pool that gives a
replica back sooner would meet the next burst with a worker still loading. At most 3600 s, the
most Kubernetes' HPA takes (pkg/apis/autoscaling/validation, MaxStabilizationWindowSeconds).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from core.aws.ec2_instances import INSTANCE_FACTS
from core.cold_start import checkpoint_bytes, cold_start
from core.kubernetes.autoscaling import MAX_STABILIZATION_WINDOW_SECONDS
from hyperpod_dpd.advise.capacity import PERCENTILE, PoolCapacity, round_down
from hyperpod_dpd.advise.search import Layout
from hyperpod_dpd.advise.workload import Workload
from settings.endpoint.autoscaling import PoolRatio, ScalingConfig
from settings.endpoint.scaling_pair import floor_of

DEFAULT_HOLD = ScalingConfig.model_fields["scale_down_stabilization_seconds"].default
MAX_HOLD = MAX_STABILIZATION_WINDOW_SECONDS  # the longest scale-down window the HPA takes


@dataclass(frozen=True)
class Start:
    """What a new worker of the endpoint starts from: its model, node and caches."""

    model: str  # catalog name
    instance_type: str
    weights_cached: bool = False
    image_cached: bool = False

    def seconds(self, tp: int) -> float | None:
        size, facts = checkpoint_bytes(self.model), INSTANCE_FACTS.get(self.instance_type)
        if size is None or facts is None:
            return None
        return cold_start(size, tp, facts.network_gbps, weights_cached=self.weights_cached,
                          image_cached=self.image_cached).total  # fmt: skip


def hold(start: Start | None, tp: int) -> int:
    """The scale-down window of a pool at `tp`: the default, or a new worker's start in whole
    minutes when that is longer, at most MAX_HOLD."""
    seconds = None if start is None else start.seconds(tp)
    if seconds is None:
        return DEFAULT_HOLD
    return min(MAX_HOLD, max(DEFAULT_HOLD, math.ceil(seconds / 60) * 60))


def ratio_of(layout: Layout) -> PoolRatio:
    """The layout's prefill:decode in lowest terms (2P2D: 1:1)."""
    common = math.gcd(layout.replicas, layout.decode_replicas)
    return PoolRatio(prefill=layout.replicas // common, decode=layout.decode_replicas // common)


@dataclass(frozen=True)
class Scaling:
    """A layout's autoscaling: each pool with a target, its bounds, and the ratio."""

    layout: Layout
    pools: dict[str, PoolCapacity]  # those with a target
    bounds: dict[str, tuple[int, int]]  # pool -> (minReplicas, maxReplicas)
    ratio: PoolRatio | None  # DPD with both pools scaled
    within: str  # the workload and the source, for the recorded capacity
    notes: tuple[str, ...]
    holds: dict[str, int] = field(default_factory=dict)  # pool -> scale-down window, seconds

    @property
    def room(self) -> bool:
        return any(low < high for low, high in self.bounds.values())

    def as_json(self, workload: Workload) -> dict[str, Any]:
        out: dict[str, Any] = {
            "percentile": PERCENTILE,
            "slo": {"ttftMs": workload.ttft_ms, "tpotMs": workload.tpot_ms},
        }
        for pool, cap in self.pools.items():
            entry = cap.as_json()
            if pool in self.bounds:
                low, high = self.bounds[pool]
                entry |= {"minReplicas": low, "maxReplicas": high}
            entry["scaleDownStabilizationSeconds"] = self.holds.get(pool, DEFAULT_HOLD)
            out[pool] = entry
        if self.ratio is not None:
            out["ratio"] = {
                "prefill": self.ratio.prefill,
                "decode": self.ratio.decode,
                "follower": self.ratio.follower,
            }
        out["roomToScale"] = self.room
        out["notes"] = list(self.notes)
        return out

    def config_keys(self) -> dict[str, Any]:
        """The endpoint's `autoscaling` as `--write` sets it: each pool with a target (its
        signal, bounds, target and the capacity recorded), and the ratio (null: none)."""

        def pool_keys(pool: str) -> dict[str, Any]:
            cap, (low, high) = self.pools[pool], self.bounds[pool]
            capacity = {
                "metric": cap.metric,
                "perReplica": cap.capacity,
                "within": f"{cap.limit} at {self.within}",
            }
            keys = {"minReplicas": low, "maxReplicas": high, "metric": cap.metric,
                    "query": None, "target": cap.target, "capacity": capacity}  # fmt: skip
            if self.holds.get(pool, DEFAULT_HOLD) != DEFAULT_HOLD:
                keys["scaleDownStabilizationSeconds"] = self.holds[pool]
            return keys

        if self.layout.mode == "colocated":
            return {**pool_keys("colocated"), "prefill": None, "decode": None, "ratio": None}
        keys: dict[str, Any] = {pool: pool_keys(pool) for pool in self.bounds}
        keys["ratio"] = (
            None
            if self.ratio is None
            else {"prefill": self.ratio.prefill, "decode": self.ratio.decode}
        )
        # A DPD endpoint's autoscaling is per pool: the colocated fields go.
        return keys | {"maxReplicas": None, "target": None, "metric": None, "capacity": None}


def scaling(
    layout: Layout,
    capacities: dict[str, PoolCapacity],
    room: dict[str, int] | None,
    within: str,
    start: Start | None = None,
) -> Scaling | None:
    """`layout`'s autoscaling from the pools' capacities; `room`: the nodes each pool's groups
    leave it, the layout's own at the least (None: the layout's, advise sizing the groups);
    `start`: what a new worker starts from (None: unknown, the default scale-down window).
    None: no pool has a target."""
    scaled = {p: c for p, c in capacities.items() if c.target is not None}
    notes = [f"{p}: no target: {c.limit} not held ({c.why})" for p, c in capacities.items()
             if c.target is None]  # fmt: skip
    if not scaled:
        return None
    own = layout.pool_nodes
    nodes = {p: own[p] if room is None else max(own[p], room.get(p, 0)) for p in scaled}
    bounds = {p: (1, max(1, n)) for p, n in nodes.items()}
    ratio = None
    if layout.mode == "dpd" and set(scaled) == {"prefill", "decode"}:
        ratio = ratio_of(layout)
        bounds = _paired(ratio, bounds, notes)
    if not any(low < high for low, high in bounds.values()):
        where = ("the layout's nodes" if room is None
                 else "the layout's nodes and those the groups leave it")  # fmt: skip
        notes.append(f"no room to scale: {where} hold {_nodes(bounds)}, each pool's minimum and "
                     "maximum alike; give the groups more nodes (instanceGroups.<group>."
                     "instanceCount) and raise maxReplicas to scale out")  # fmt: skip
    for p, c in scaled.items():
        if c.capacity is not None and c.target is not None and c.target < c.capacity:
            notes.append(f"{p}: target below capacity: an overloaded replica reads "
                         f"{round_down(c.saturation or 0):g}, and the autoscaler ignores a reading "
                         "within 10% of its target")  # fmt: skip
    holds = {p: hold(start, layout.decode_tp if p == "decode" else layout.tp) for p in scaled}
    for p, seconds in holds.items():
        if seconds == MAX_HOLD:
            notes.append(f"{p}: a new worker takes over {MAX_HOLD} s to start; scale-in waits "
                         f"the most the autoscaler takes ({MAX_HOLD} s): turn the caches on "
                         "(endpoint cache.weights, cache.image)")  # fmt: skip
    return Scaling(layout, scaled, bounds, ratio, within, tuple(notes), holds)


def _nodes(bounds: dict[str, tuple[int, int]]) -> str:
    return ", ".join(f"{p} {high}" for p, (_, high) in bounds.items())


def _paired(
    ratio: PoolRatio, bounds: dict[str, tuple[int, int]], notes: list[str]
) -> dict[str, tuple[int, int]]:
    """The bounds with the follower at its share of the leader's: its minimum its share of
    one leader replica, the leader's maximum what the follower's nodes can follow."""
    leader, follower = ratio.leader, ratio.follower
    (_, lead_max), (_, follow_max) = bounds[leader], bounds[follower]
    while lead_max > 1 and floor_of(ratio, lead_max) > follow_max:
        lead_max -= 1
    if lead_max < bounds[leader][1]:
        notes.append(f"{leader} at most {lead_max}: {follower}'s {follow_max} nodes follow no more")
    low = min(floor_of(ratio, 1), follow_max)
    return {leader: (1, lead_max), follower: (low, follow_max)}


def comment(workload: Workload, engine: dict[str, Any], layout: Layout) -> str:
    """The comment `--write` puts above the endpoint's autoscaling (after patch.COMMENT_START)."""
    return (
        f"({engine['name']} {engine['version']}) for {layout.label}: {workload.describe()}; "
        f"judged at the simulator's {PERCENTILE}. Rerun it when the workload or the SLO changes "
        "(`advise --measured RUN` sets a benchmark's numbers beside them)."
    )
