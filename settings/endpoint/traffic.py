"""`hyperpod-dpd:traffic`: one stable URL in front of several endpoints, with a weighted split.

Integer percent per endpoint key, summing to 100. Moving weight (5 -> 50 -> 100 to promote a
candidate, 0 to roll it back) changes only the routing objects, never an endpoint. Here too the
rule of who may scale to no replicas: only a pool no request is sent to, or one whose signal is
there with no pod of its own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Literal

from pydantic import Field

from core.aws.aws_rules import (
    ALB_CONDITION_VALUES_MAX,
    ALB_FORWARD_TARGET_GROUPS_MAX,
    ALB_QUOTAS_URL,
)
from core.problems import MISSING, ConfigProblem
from core.vocabulary import (
    AUTONAME_SUFFIX,
    ELB_NAME_MAX,
    TRAFFIC_SPLIT_NAME,
    target_group_name,
)
from settings.config.errors import full_key, set_fix
from settings.config.fields import (
    DOMAIN_NAME_MAX,
    DOMAIN_NAME_PATTERN,
    HOSTED_ZONE_ID_PATTERN,
    Cidr,
    SettingsModel,
    matching,
)
from settings.config.unique import Once, RepeatsCheckedBy
from settings.endpoint.entries import EndpointEntry, scaling_of
from settings.endpoint.names import router_service

# A target group's auto-name fails every `pulumi preview` and `up` of the stack when it is
# longer than ELB_NAME_MAX: "name '...-' plus 7 random chars is longer than maximum length 32"
# (with --skip-preview, after what was registered before it is created).
TARGET_GROUP_NAME_MAX = ELB_NAME_MAX
# The longest endpoint key a split takes: its target group is named after it (specs/traffic_targets.py).
TRAFFIC_KEY_MAX = (
    TARGET_GROUP_NAME_MAX - AUTONAME_SUFFIX - len(target_group_name(TRAFFIC_SPLIT_NAME, ""))
)


# An ACM certificate ARN (ACM's ARN format, Service Authorization Reference for ACM:
# arn:${Partition}:acm:${Region}:${Account}:certificate/${CertificateId}, the id a UUID).
CERTIFICATE_ARN_PATTERN = r"^arn:aws[a-z-]*:acm:[a-z0-9-]+:[0-9]{12}:certificate/[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$"
SECURITY_GROUP_ID_PATTERN = r"^sg-([0-9a-f]{8}|[0-9a-f]{17})$"
# ALB security policies that negotiate TLS 1.2 or 1.3 only, with forward secrecy ("Security
# policies for your Application Load Balancer",
# https://docs.aws.amazon.com/elasticloadbalancing/latest/application/describe-ssl-policies.html).
# The first is what ELB itself recommends.
TLS_POLICIES = (
    "ELBSecurityPolicy-TLS13-1-2-2021-06",
    "ELBSecurityPolicy-TLS13-1-2-Res-2021-06",
    "ELBSecurityPolicy-TLS13-1-3-2021-06",
    "ELBSecurityPolicy-TLS13-1-2-FIPS-2023-04",
    "ELBSecurityPolicy-TLS13-1-3-FIPS-2023-04",
)
TlsPolicy = Literal[
    "ELBSecurityPolicy-TLS13-1-2-2021-06",
    "ELBSecurityPolicy-TLS13-1-2-Res-2021-06",
    "ELBSecurityPolicy-TLS13-1-3-2021-06",
    "ELBSecurityPolicy-TLS13-1-2-FIPS-2023-04",
    "ELBSecurityPolicy-TLS13-1-3-FIPS-2023-04",
]
# S3 lifecycle: days after which the ALB's access logs expire.
ACCESS_LOG_DAYS_MAX = 3650
# Each allowed source is one ingress rule of the split's security group, named after it.
_ONE_RULE = (
    "each is one ingress rule of the split's security group, named traffic-ingress-<entry>: a "
    "second is a resource of the same name, and EC2 refuses a repeated rule "
    "(InvalidPermission.Duplicate)"
)
# The split's API keys are held in one http-header condition of its listener rule, which compares
# at most ALB_CONDITION_VALUES_MAX values (core/aws/aws_rules.py): the key clients use, the next
# one and the one before, while a rotation is under way.
API_KEYS_MAX = ALB_CONDITION_VALUES_MAX
# A key's name (not the key: each is generated, specs/traffic_keys.py): it names the key's resource.
API_KEY_NAME_PATTERN = r"^[a-z0-9]([-a-z0-9]{0,14}[a-z0-9])?$"
FIRST_API_KEY = "first"


class TrafficListenerConfig(SettingsModel):
    """Who reaches the split's listener and how (hyperpod-dpd:trafficListener)."""

    certificate_arn: Annotated[str, matching(CERTIFICATE_ARN_PATTERN)] | None = Field(
        None,
        description="ACM certificate (e.g. issued by ACM Private CA, for the internal name your "
        "clients use) in the stack's Region: the listener is HTTPS on 443 with it. Without one "
        "it is plain HTTP on 80 and the plan says so (prompts and completions in clear text).",
    )
    ssl_policy: TlsPolicy = Field(
        TLS_POLICIES[0],
        description="The HTTPS listener's ELB security policy: TLS 1.2+ only (1.3 preferred).",
    )
    allowed_cidrs: Annotated[list[Cidr], Once(_ONE_RULE)] = Field(
        default_factory=list,
        description="Client CIDRs (in or peered with the VPC) let in to the listener. Besides "
        "these and allowedSecurityGroupIds, only the HyperPod nodes (in-cluster clients such "
        "as `hyperpod-dpd benchmark run --service`) may connect.",
    )
    allowed_security_group_ids: Annotated[
        list[Annotated[str, matching(SECURITY_GROUP_ID_PATTERN)]], Once(_ONE_RULE)
    ] = Field(
        default_factory=list,
        description="Security groups of the VPC whose members may connect to the listener.",
    )
    access_logs: bool = Field(
        True,
        description="Write the ALB's access logs to a bucket of the stack (private, TLS-only, "
        "SSE-S3: the only encryption ALB log delivery supports).",
    )
    access_log_days: int = Field(
        90,
        ge=1,
        le=ACCESS_LOG_DAYS_MAX,
        description="Days the access logs are kept (S3 lifecycle expiration).",
    )
    domain_name: (
        Annotated[str, matching(DOMAIN_NAME_PATTERN, max_length=DOMAIN_NAME_MAX)] | None
    ) = Field(
        None,
        description="The name clients call the split by (e.g. llm.internal.example.com), "
        "covered by certificateArn (`hyperpod-dpd preflight` asks ACM): an alias record in "
        "hostedZoneId points it at the load balancer, and trafficUrl uses it. Required with a "
        "certificate (the load balancer's own name is covered by none you can have).",
    )
    hosted_zone_id: Annotated[str, matching(HOSTED_ZONE_ID_PATTERN)] | None = Field(
        None,
        description="The Route 53 private hosted zone that holds domainName (the stack adds "
        "its alias record, and associates the zone with the stack's VPC so in-cluster clients "
        "resolve it too).",
    )
    # Checked by _check_api_key_names, not a pattern here: a value that is no name may be a key
    # pasted by mistake, and a refusal must not print it.
    api_key_names: Annotated[
        list[str], RepeatsCheckedBy("_check_api_key_names: it never prints what may be a key")
    ] = Field(
        default_factory=lambda: [FIRST_API_KEY],
        description="Names of the split's API keys, not the keys: each is generated (48 "
        "random characters, a Pulumi secret) and the listener forwards only requests with "
        "`Authorization: Bearer <key>` of one of them, refusing the rest with 401. The last "
        f"is the one handed out (stack output trafficApiKey). 1 to {API_KEYS_MAX}: add a "
        "name to rotate, remove the old one once clients moved (docs/deploy.md).",
    )


def check_traffic_listener(
    listener: TrafficListenerConfig, traffic: Mapping[str, int], region: str
) -> list[ConfigProblem]:
    """A certificate in the stack's Region (an ALB takes only its own Region's ACM
    certificates), with the name clients call that it covers and the zone that name is in;
    one to three distinct API key names. Without hyperpod-dpd:traffic there is no listener and
    these settings wait unused (a split dropped and added back keeps them)."""
    problems = _check_name(listener) + _check_api_key_names(listener.api_key_names)
    arn = listener.certificate_arn
    key = full_key(("trafficListener", "certificateArn"))
    if arn is not None:
        cert_region = arn.split(":")[3]
        if cert_region != region:
            problems.append(
                ConfigProblem(
                    key,
                    arn,
                    f"an ACM certificate in aws:region {region} (a load balancer uses "
                    "certificates of its own Region only)",
                    f"request or import the certificate in {region} and set its ARN: "
                    + set_fix(key, re.sub(r":acm:[a-z0-9-]+:", f":acm:{region}:", arn)),
                )
            )
    return problems


EXAMPLE_DOMAIN = "llm.internal.example.com"
EXAMPLE_ZONE = "Z0123456789ABCDEFGHIJ"


def _check_name(listener: TrafficListenerConfig) -> list[ConfigProblem]:
    """A certificate and a name come together (HTTPS clients check the name against the
    certificate; `preflight` asks ACM whether it covers it), and a name with its zone."""
    cert, name, zone = listener.certificate_arn, listener.domain_name, listener.hosted_zone_id
    key = {k: full_key(("trafficListener", k)) for k in ("certificateArn", "domainName",
                                                          "hostedZoneId")}  # fmt: skip
    problems = []
    if cert is not None and name is None:
        problems.append(
            ConfigProblem(
                key["domainName"],
                MISSING,
                f"the name your clients call, covered by {key['certificateArn']}: the load "
                "balancer's own name (internal-...elb.amazonaws.com) is AWS's, and no "
                "certificate of yours covers it, so clients could only call it with TLS "
                "checks off",
                f"{set_fix(key['domainName'], EXAMPLE_DOMAIN)} and "
                f"{set_fix(key['hostedZoneId'], EXAMPLE_ZONE)} (the private hosted zone that "
                "holds it); or remove the certificate for plain HTTP",
            )
        )
    if name is not None and cert is None:
        problems.append(
            ConfigProblem(
                key["domainName"],
                name,
                f"a name with {key['certificateArn']} (an ACM certificate that covers it): "
                "the name is what HTTPS clients check the certificate against; without one "
                "the listener is plain HTTP on the load balancer's own name",
                f"{set_fix(key['certificateArn'], 'arn:aws:acm:<region>:<account>:certificate/<id>')}"
                f" for a certificate covering {name}, or pulumi config rm --path "
                f"'{key['domainName']}'",
            )
        )
    if name is not None and zone is None:
        problems.append(
            ConfigProblem(
                key["hostedZoneId"],
                MISSING,
                f"the Route 53 private hosted zone that holds {name}: the stack adds the "
                "alias record that points the name at the load balancer",
                set_fix(key["hostedZoneId"], EXAMPLE_ZONE)
                + " (aws route53 list-hosted-zones-by-name)",
            )
        )
    if zone is not None and name is None:
        problems.append(
            ConfigProblem(
                key["hostedZoneId"],
                zone,
                f"a zone with {key['domainName']}, the name the record in it points at the "
                "load balancer",
                f"{set_fix(key['domainName'], EXAMPLE_DOMAIN)}, or pulumi config rm --path "
                f"'{key['hostedZoneId']}'",
            )
        )
    return problems


def _check_api_key_names(names: list[str]) -> list[ConfigProblem]:
    """Distinct names of the key-name form, one to API_KEYS_MAX of them. A name that is not of
    that form is not shown: it may be a key pasted where its name belongs."""
    key = full_key(("trafficListener", "apiKeyNames"))
    bad = [
        ConfigProblem(
            f"{key}[{i}]",
            f"<{len(name)} characters, not shown: it may be a key>",
            "the name of a key, never a key (the stack generates each key): lowercase letters, "
            "digits and '-', at most 16 characters, such as first or 2027-01",
            set_fix(
                key, [n if re.fullmatch(API_KEY_NAME_PATTERN, n) else FIRST_API_KEY for n in names]
            )
            + " (a name in its place); if it was a key, it stays in this file's history: "
            "use it nowhere",
        )
        for i, name in enumerate(names)
        if not isinstance(name, str) or not re.fullmatch(API_KEY_NAME_PATTERN, name)
    ]
    if bad:
        return bad
    kept = list(dict.fromkeys(names))
    if len(kept) != len(names):
        repeated = sorted({n for n in names if names.count(n) > 1})
        return [
            ConfigProblem(
                key,
                names,
                f"distinct names ({', '.join(repeated)} is given more than once): each names "
                "one generated key",
                set_fix(key, kept),
            )
        ]
    if not 1 <= len(names) <= API_KEYS_MAX:
        fix = [FIRST_API_KEY] if not names else names[-API_KEYS_MAX:]
        return [
            ConfigProblem(
                key,
                names,
                f"1 to {API_KEYS_MAX} key names ({len(names)} here): the listener forwards "
                "only requests that carry one of the keys (no name, no request would pass), "
                f"and one header condition of an ALB rule compares at most {API_KEYS_MAX} "
                "values (ELB User Guide, condition types for listener rules)",
                set_fix(key, fix) + (" (the newest kept)" if names else ""),
            )
        ]
    return []


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
                    f"pulumi config set --path '{key}.{name}' 5",
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
