"""A DPD endpoint's two pools scaled as a pair (`autoscaling.ratio`), judged before anything renders:
both pools autoscaled, the follower's maxReplicas room for its share of the leader's, and the
leader's pods told apart by the pattern the pair's trigger counts them with (core/vllm/pod_names.py).

The follower (the pool with more replicas in the layout's unit, decode on a tie) gets a second
trigger that holds it at its share of the leader's pods (core/vllm/scaling_signals.py pair_query);
the leader scales on its own signal alone. One way only: two pools each held at the other's count
would hold each other up, and neither would ever scale in.
"""

from __future__ import annotations

import math

from core.problems import ConfigProblem
from settings.config.errors import set_fix
from settings.endpoint.autoscaling import PoolRatio
from settings.endpoint.model import EndpointConfig
from settings.endpoint.scaling_signal import check_pod_names


def floor_of(ratio: PoolRatio, leader_replicas: int) -> int:
    """The follower's replicas at `leader_replicas` of the leader: ceil(leader x its share), as
    KEDA's AverageValue target of 1 asks for them."""
    return math.ceil(leader_replicas * ratio.share(ratio.follower) / ratio.share(ratio.leader))


def check_pair(e: EndpointConfig, key: str, name_key: str) -> list[ConfigProblem]:
    """`key`: the endpoint's autoscaling key; `name_key`: its name key."""
    a = e.autoscaling
    ratio = None if a is None else a.ratio
    if a is None or ratio is None:
        return []
    missing = [pool for pool in (ratio.leader, ratio.follower) if getattr(a, pool) is None]
    if missing:
        return [
            ConfigProblem(
                f"{key}.ratio",
                {"prefill": ratio.prefill, "decode": ratio.decode},
                "a ratio between two autoscaled pools (it holds one at its share of the other's "
                f"replicas), but {' and '.join(missing)} {'has' if len(missing) == 1 else 'have'} "
                "no autoscaling",
                f"set {key}.{missing[0]} (minReplicas, maxReplicas, metric, target), or remove "
                f"{key}.ratio",
            )
        ]
    leader, follower = getattr(a, ratio.leader), getattr(a, ratio.follower)
    problems = []
    top = floor_of(ratio, leader.max_replicas)
    if follower.max_replicas < top:
        max_key = f"{key}.{ratio.follower}.maxReplicas"
        problems.append(
            ConfigProblem(
                max_key,
                follower.max_replicas,
                f"at least {top}: ratio {ratio.prefill}:{ratio.decode} holds {ratio.follower} at "
                f"{ratio.share(ratio.follower)} per {ratio.share(ratio.leader)} {ratio.leader} "
                f"replicas, and {ratio.leader} may scale to {leader.max_replicas}",
                f"{set_fix(max_key, top)}, or lower {key}.{ratio.leader}.maxReplicas",
            )
        )
    why = f"with {key}.ratio (the pair's trigger counts the {ratio.leader} pool's pods)"
    return problems + check_pod_names(e, ratio.leader, name_key, why, f"remove {key}.ratio")
