"""`hyperpod-dpd:traffic`: one stable URL in front of several endpoints, with a weighted split.

Integer percent per endpoint key, summing to 100. Moving weight (5 -> 50 -> 100 to promote a
candidate, 0 to roll it back) changes only the routing objects, never an endpoint.
"""

from __future__ import annotations

from collections.abc import Mapping

from core.vocabulary import TRAFFIC_SPLIT_NAME, target_group_name
from settings.endpoint_names import router_service
from settings.endpoints import EndpointEntry, scaling_of
from settings.errors import ConfigProblem, full_key, set_fix

# pulumi-aws auto-names aws_lb_target_group with at most 32 characters (provider/aliases.go:
# tfbridge.AutoName("name", 32, "-"), CreateTargetGroup's limit): the logical name, "-" and 7
# random characters (pulumi-terraform-bridge's AutoName). Longer fails the provider's Check, so
# every `pulumi preview` and `up` of the stack: "name '...-' plus 7 random chars is longer than
# maximum length 32" (with --skip-preview, after what was registered before it is created).
TARGET_GROUP_NAME_MAX = 32
AUTONAME_SUFFIX = len("-") + 7
# The longest endpoint key a split takes: its target group is named after it (specs/traffic.py).
TRAFFIC_KEY_MAX = (
    TARGET_GROUP_NAME_MAX - AUTONAME_SUFFIX - len(target_group_name(TRAFFIC_SPLIT_NAME, ""))
)


def check_traffic(traffic: Mapping[str, int], listed: list[EndpointEntry]) -> list[ConfigProblem]:
    """Weights of endpoints that exist, from 0 to 100, summing to 100, on keys a target group
    can be named after; none on an endpoint that can have no replicas (an autoscaler that may
    scale a pool to zero)."""
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
    problems += _check_key_lengths(traffic, listed)
    return problems


def _check_key_lengths(
    traffic: Mapping[str, int], listed: list[EndpointEntry]
) -> list[ConfigProblem]:
    """Each endpoint of the split has a key its target group's auto-name fits (TRAFFIC_KEY_MAX).
    The key is the user's (it names the endpoint's resources too): the fix renames it in both
    maps, to the key cut to fit (see _shorter_key)."""
    by_key = {x.key: x for x in listed if x.key is not None}
    # What the renamed endpoints must not take: the other keys and router Services, and what
    # an earlier fix here proposes.
    keys = set(by_key)
    services = {router_service(x.config.name, x.config.namespace) for x in listed}
    problems = []
    for name in sorted(traffic):
        entry = by_key.get(name)
        if entry is None or len(name) <= TRAFFIC_KEY_MAX:
            continue  # an unknown key is refused above
        key = full_key(("traffic", name))
        tg = target_group_name(TRAFFIC_SPLIT_NAME, name)
        allowed = (
            f"an endpoint key of at most {TRAFFIC_KEY_MAX} characters ({len(name)} here): the "
            f"split's target group is auto-named '{tg}-' plus 7 random characters, and "
            f"pulumi-aws names target groups with at most {TARGET_GROUP_NAME_MAX}"
        )
        short = _shorter_key(entry, keys, services)
        if short is None:
            fix = f"rename the endpoint to a key of at most {TRAFFIC_KEY_MAX} characters"
        else:
            keys.add(short)
            if entry.config.name == name:
                services.add(router_service(short, entry.config.namespace))
            fix = (
                f"rename {full_key(('endpoints', name))} to {full_key(('endpoints', short))} "
                f"and rename {key} to {full_key(('traffic', short))} (the endpoint's resources "
                f"are named after its key: a deployed one is replaced)"
            )
        problems.append(ConfigProblem(key, name, allowed, fix))
    return problems


def _shorter_key(entry: EndpointEntry, keys: set[str], services: set[str]) -> str | None:
    """The key cut to TRAFFIC_KEY_MAX, else cut shorter and ending -2 ... -9: the first that is
    no key in `keys` and, when the endpoint's name is its key (and so follows the rename), gives
    a router Service that is none of `services`."""
    name = entry.key or ""
    follows = entry.config.name == name
    stem = name[:TRAFFIC_KEY_MAX].rstrip("-")
    cut = name[: TRAFFIC_KEY_MAX - 2].rstrip("-")
    for candidate in [stem, *(f"{cut}-{n}" for n in range(2, 10))]:
        clash = follows and router_service(candidate, entry.config.namespace) in services
        if candidate not in keys and not clash:
            return candidate
    return None


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
