"""`hyperpod-dpd:traffic`: one stable URL in front of several endpoints, with a weighted split.

Integer percent per endpoint key, summing to 100. Moving weight (5 -> 50 -> 100 to promote a
candidate, 0 to roll it back) changes only the routing objects, never an endpoint. Here too the
rule of who may scale to no replicas: only a pool no request is sent to, or one whose signal is
there with no pod of its own.
"""

from __future__ import annotations

from collections.abc import Mapping

from core.aws.aws_rules import (
    ALB_FORWARD_TARGET_GROUPS_MAX,
    ALB_QUOTAS_URL,
)
from core.problems import ConfigProblem
from core.vocabulary import (
    AUTONAME_SUFFIX,
    ELB_NAME_MAX,
    TRAFFIC_SPLIT_NAME,
    target_group_name,
)
from settings.config.errors import full_key, set_fix
from settings.endpoint.entries import EndpointEntry, scaling_of
from settings.endpoint.names import router_service

# A target group's auto-name fails every `pulumi preview` and `up` of the stack when it is
# longer than ELB_NAME_MAX: "name '...-' plus 7 random chars is longer than maximum length 32"
# (with --skip-preview, after what was registered before it is created).
TARGET_GROUP_NAME_MAX = ELB_NAME_MAX
# The longest endpoint key a split takes: its target group is named after it
# (specs/traffic/targets.py).
TRAFFIC_KEY_MAX = (
    TARGET_GROUP_NAME_MAX - AUTONAME_SUFFIX - len(target_group_name(TRAFFIC_SPLIT_NAME, ""))
)


def check_traffic(traffic: Mapping[str, int], listed: list[EndpointEntry]) -> list[ConfigProblem]:
    """Weights of endpoints that exist, from 0 to 100, summing to 100, on keys a target group
    can be named after; no pool that may scale to zero unless it is sent no request or its
    signal does not need its pods (check_scale_from_zero, with or without a split)."""
    return _check_weights(traffic, listed) + check_scale_from_zero(traffic, listed)


def _check_weights(traffic: Mapping[str, int], listed: list[EndpointEntry]) -> list[ConfigProblem]:
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
                    set_fix(f"{key}.{name}", 5),
                )
            )
    if len(traffic) > ALB_FORWARD_TARGET_GROUPS_MAX:
        problems.append(_too_many(traffic))
    total = sum(traffic.values())
    if not problems and total != 100:
        problems.append(
            ConfigProblem(
                key,
                dict(traffic),
                f"weights summing to 100 (these sum to {total})",
                f"{set_fix(key, _to_100(traffic))} (the other weights kept, the largest taking "
                "the rest); 100 and 0 promote or roll back",
            )
        )
    problems += _check_key_lengths(traffic, listed)
    return problems


def _too_many(traffic: Mapping[str, int]) -> ConfigProblem:
    """More endpoints than one forward action splits between. The fix keeps the largest shares
    (the first keys among equal ones), scaled to sum to 100 again."""
    key = full_key(("traffic",))
    most = ALB_FORWARD_TARGET_GROUPS_MAX
    kept = sorted(traffic, key=lambda name: -traffic[name])[:most]
    dropped = [name for name in traffic if name not in kept]
    allowed = (
        f"at most {most} endpoints ({len(traffic)} here): the split's listener forwards to one "
        f"target group per endpoint, and an ALB forward action takes at most {most} target "
        f"groups (Elastic Load Balancing quotas, not adjustable: {ALB_QUOTAS_URL})"
    )
    fix = (
        f"{set_fix(key, _to_100({name: traffic[name] for name in kept}))} (the {most} largest "
        f"shares, summing to 100): the split leaves out {', '.join(dropped)}, still served at "
        "its own router; or move endpoints to a stack of their own"
    )
    return ConfigProblem(key, dict(traffic), allowed, fix)


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


def check_scale_from_zero(
    traffic: Mapping[str, int], listed: list[EndpointEntry]
) -> list[ConfigProblem]:
    """autoscaling minReplicas 0 only where the pool comes back: an endpoint the split sends no
    request (weight 0 in `traffic`, an idle canary), or a pool scaling on a query of the user's,
    which may read a signal that is there with no pod (the router's). A built-in metric is a
    query over the pool's own pods (specs/scaling.py query_of, core/vllm/pod_names.py): with
    no pod it returns nothing, KEDA's prometheus scaler takes an empty result as no demand
    (ignoreNullValues, true by default) and never activates the pool, and its requests find no
    pod. The one rule of scale-to-zero: weight or no split, one endpoint or several."""
    problems = []
    for entry in listed:
        weight = traffic.get(entry.key) if entry.key is not None else None
        if weight == 0:
            continue
        for pool in entry.pools():
            scaling = scaling_of(entry.config, pool)
            if scaling is not None and scaling.min_replicas == 0 and scaling.query is None:
                problems.append(_no_way_back(entry, pool, scaling.metric, weight, traffic))
    return problems


def _no_way_back(
    entry: EndpointEntry,
    pool: str,
    metric: str | None,
    weight: int | None,
    traffic: Mapping[str, int],
) -> ConfigProblem:
    key = entry.config_key("autoscaling", *(() if pool == "colocated" else (pool,)), "minReplicas")
    sent = "its router is reached directly" if weight is None else f"{weight}% of traffic"
    allowed = (
        f"at least 1 while the {pool} pool scales on {metric or 'a built-in metric'} ({sent}): "
        "the metric is read from the pool's own pods, so with none KEDA sees no demand and "
        "never scales it up from 0, and its requests find no pod; 0 only for an endpoint with "
        "weight 0 in hyperpod-dpd:traffic, or with a query of your own"
    )
    fix = set_fix(key, 1)
    rest = {**traffic, entry.key: 0} if weight is not None else {}
    if sum(rest.values()) > 0 and all(0 <= w <= 100 for w in rest.values()):
        # Or idle it: the others keep their shares, summing to 100 again.
        idle = set_fix(full_key(("traffic",)), _to_100(rest))
        fix += f", or weight 0 (an idle canary): {idle}"
    return ConfigProblem(key, 0, allowed, fix)


def _to_100(traffic: Mapping[str, int]) -> dict[str, int]:
    """Weights that sum to 100 keeping what the user set: every weight but the largest (the
    baseline's) as it is, the largest taking the rest (85/5 -> 95/5: the canary stays at 5%).
    When the others alone pass 100, the shares scaled to whole percents (largest remainders
    round up); all to the first endpoint when every weight is 0."""
    total = sum(traffic.values())
    if total <= 0:
        return {name: 100 if i == 0 else 0 for i, name in enumerate(traffic)}
    largest = max(traffic, key=lambda n: traffic[n])
    rest = total - traffic[largest]
    if rest <= 100:
        return {name: 100 - rest if name == largest else w for name, w in traffic.items()}
    exact = {name: weight * 100 / total for name, weight in traffic.items()}
    out = {name: int(share) for name, share in exact.items()}
    for name in sorted(exact, key=lambda n: exact[n] - out[n], reverse=True)[
        : 100 - sum(out.values())
    ]:
        out[name] += 1
    return out
