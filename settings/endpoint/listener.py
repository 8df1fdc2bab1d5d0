"""`hyperpod-dpd:trafficListener`: who reaches the traffic split's listener and how (certificate
and TLS policy, allowed sources, access logs, the name clients call, API key names), and its
checks."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated

from pydantic import Field

from core.problems import MISSING, ConfigProblem
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
from settings.endpoint.api_keys import API_KEYS_MAX, FIRST_API_KEY, check_api_key_names
from settings.endpoint.tls import CERTIFICATE_ARN_PATTERN, TLS_POLICIES, TlsPolicy

SECURITY_GROUP_ID_PATTERN = r"^sg-([0-9a-f]{8}|[0-9a-f]{17})$"
# S3 lifecycle: days after which the ALB's access logs expire.
ACCESS_LOG_DAYS_MAX = 3650
# Each allowed source is one ingress rule of the split's security group, named after it.
_ONE_RULE = (
    "each is one ingress rule of the split's security group, named traffic-ingress-<entry>: a "
    "second is a resource of the same name, and EC2 refuses a repeated rule "
    "(InvalidPermission.Duplicate)"
)


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
    # Checked by check_api_key_names, not a pattern here: a value that is no name may be a key
    # pasted by mistake, and a refusal must not print it.
    api_key_names: Annotated[
        list[str], RepeatsCheckedBy("check_api_key_names: it never prints what may be a key")
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
    problems = _check_name(listener) + check_api_key_names(listener.api_key_names)
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
