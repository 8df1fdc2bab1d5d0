"""`hyperpod-dpd:traffic`: one stable URL in front of several endpoints, with a weighted split.

Integer percent per endpoint key, summing to 100. Moving weight (5 -> 50 -> 100 to promote a
candidate, 0 to roll it back) changes only the routing objects, never an endpoint.
"""

from __future__ import annotations

from collections.abc import Mapping

from settings.endpoints import EndpointEntry, scaling_of
from settings.errors import ConfigProblem, full_key, set_fix


def check_traffic(traffic: Mapping[str, int], listed: list[EndpointEntry]) -> list[ConfigProblem]:
    """Weights of endpoints that exist, from 0 to 100, summing to 100; none on an endpoint that
    can have no replicas (an autoscaler that may scale a pool to zero)."""
    if not traffic:
        return []
    key = full_key(("traffic",))
    keys = [x.key for x in listed if x.key is not None]
    problems = []
    if not keys:
        problems.append(
            ConfigProblem(
                key,
                dict(traffic),
                "weights over the keys of hyperpod-dpd:endpoints (a split needs two endpoints)",
                "declare the endpoints under hyperpod-dpd:endpoints.<name>, or remove "
                "hyperpod-dpd:traffic",
            )
        )
        return problems
    for name, weight in traffic.items():
        if name not in keys:
            problems.append(
                ConfigProblem(
                    f"{key}.{name}",
                    weight,
                    f"a key of hyperpod-dpd:endpoints ({', '.join(keys)})",
                    f"rename it to one of them or remove {key}.{name}",
                )
            )
        elif not 0 <= weight <= 100:
            problems.append(
                ConfigProblem(
                    f"{key}.{name}",
                    weight,
                    "a whole percent from 0 to 100",
                    f"pulumi config set --path '{key}.{name}' 5",
                )
            )
    total = sum(traffic.values())
    if not problems and total != 100:
        problems.append(
            ConfigProblem(
                key,
                dict(traffic),
                f"weights summing to 100 (these sum to {total})",
                f"{set_fix(key, _to_100(traffic))} (the same shares, in whole percents); 100 "
                "and 0 promote or roll back",
            )
        )
    by_key = {x.key: x for x in listed}
    for name, weight in traffic.items():
        entry = by_key.get(name)
        if entry is None or weight <= 0:
            continue
        idle = [
            pool
            for pool in entry.pools()
            if (scaling := scaling_of(entry.config, pool)) is not None and scaling.min_replicas == 0
        ]
        if idle:
            problems.append(
                ConfigProblem(
                    f"{key}.{name}",
                    weight,
                    f"0 while {name}'s {' and '.join(idle)} pool may scale to no replicas "
                    "(autoscaling.minReplicas 0): its share of requests would find no pod",
                    " and ".join(
                        set_fix(
                            entry.config_key(
                                "autoscaling", *(() if p == "colocated" else (p,)), "minReplicas"
                            ),
                            1,
                        )
                        for p in idle
                    )
                    + f", or weight 0: {set_fix(f'{key}.{name}', 0)}",
                )
            )
    return problems


def _to_100(traffic: Mapping[str, int]) -> dict[str, int]:
    """Weights scaled to sum to 100 in whole percents (largest remainders round up); all to the
    first endpoint when every weight is 0."""
    total = sum(traffic.values())
    if total <= 0:
        return {name: 100 if i == 0 else 0 for i, name in enumerate(traffic)}
    exact = {name: weight * 100 / total for name, weight in traffic.items()}
    out = {name: int(share) for name, share in exact.items()}
    for name in sorted(exact, key=lambda n: exact[n] - out[n], reverse=True)[
        : 100 - sum(out.values())
    ]:
        out[name] += 1
    return out
