"""Each pool's cold start, caches off and on (core/cold_start.py), on the slowest node it may
land on: what the plan shows per endpoint and pool (summary.md, plan.json). The first worker on
a node whose caches are not warm starts as with caches off, whatever the endpoint's cache says
(core/cold_start.py, "Which start"); the cache settings change a later worker's, on a warm
node."""

from __future__ import annotations

from dataclasses import dataclass

from core.aws.ec2_instances import INSTANCE_FACTS
from core.cold_start import ColdStart, checkpoint_bytes, cold_start
from settings.cluster.groups import InstanceGroups
from settings.endpoint.entries import EndpointEntry, placement, scaling_of


@dataclass(frozen=True)
class PoolColdStart:
    pool: str
    instance_type: str
    off: ColdStart  # both caches off
    on: ColdStart  # both caches on (on a warm node)
    current: ColdStart  # on a warm node, as the endpoint's cache settings have it
    autoscaled: bool

    @property
    def first(self) -> ColdStart:
        """The first worker on a node not warm yet: a cache miss, S3 and a pull, caches or not."""
        return self.off

    def to_json(self) -> dict:
        return {
            "instanceType": self.instance_type,
            "autoscaled": self.autoscaled,
            "cachesOff": self.off.to_json(),
            "cachesOn": self.on.to_json(),
            "asConfigured": self.current.to_json(),
            # Which start each is: the first worker on a cold node (a cache miss: caches-off
            # figures whatever the cache settings), and later ones on a node the operator warmed.
            "firstStart": self.first.to_json(),
            "warmNodeStart": self.current.to_json(),
        }


def pool_cold_starts(
    entry: EndpointEntry, groups: InstanceGroups, alone: bool
) -> list[PoolColdStart]:
    """One per pool of `entry` whose model and instance type have numbers (none otherwise)."""
    size = checkpoint_bytes(entry.config.model)
    if size is None:
        return []
    cache = entry.config.cache
    out = []
    for pool in entry.pools():
        kinds = {groups[g].instance_type for g in placement(entry, pool, groups, alone)}
        known = [k for k in sorted(kinds) if k in INSTANCE_FACTS]
        if not known:
            continue
        kind = min(known, key=lambda k: INSTANCE_FACTS[k].network_gbps)  # the slowest
        tp = entry.numbers.pools[pool].tensor_parallel_size.value
        gbps = INSTANCE_FACTS[kind].network_gbps

        def start(weights: bool, image: bool, tp: int = tp, gbps: float = gbps) -> ColdStart:
            return cold_start(size, tp, gbps, weights_cached=weights, image_cached=image)

        out.append(
            PoolColdStart(
                pool,
                kind,
                off=start(False, False),
                on=start(True, True),
                current=start(cache.weights, cache.image),
                autoscaled=scaling_of(entry.config, pool) is not None,
            )
        )
    return out
