"""hyperpod-dpd-eks-endpoint: the EKS API is private, or public only to listed CIDRs whose union
is not internet-wide (two /1 blocks open it as surely as 0.0.0.0/0; core/aws/cidrs.py) and none
of which is too wide on its own: more public addresses than a /16 (IPv4) or a /48 (IPv6) is
more than one organisation's clients, so 11.0.0.0/9 is refused although it is not the internet
(core/aws/cidrs.py too_wide says why those bounds).

Locked: mandatory on every stack. A deploy that cannot reach a private API server invites
opening it to the internet; the answer is a runner in the VPC (docs/deploy.md), never this."""

from __future__ import annotations

from core.aws.cidrs import internet_wide, too_wide
from core.vocabulary import EKS_CLUSTER_TYPE
from policies.rules import views
from policies.rules.base import Finding, Rule

KEY = "hyperpod-dpd:eks.publicAccessCidrs"


def check(resources, limits):
    for r in views.of_type(resources, EKS_CLUSTER_TYPE):
        vpc = r.props.get("vpcConfig") or {}
        if vpc.get("endpointPublicAccess") is False:
            continue
        cidrs = [str(c) for c in vpc.get("publicAccessCidrs") or []]
        if not cidrs or internet_wide(cidrs):
            together = len(cidrs) > 1 and not any(internet_wide([c]) for c in cidrs)
            listed = f" ({', '.join(cidrs)} together cover it)" if together else ""
            yield Finding(
                r.urn,
                f"the EKS API endpoint is public to the whole internet{listed}; list your "
                f"CIDRs in {KEY} (empty keeps it private)",
            )
            continue
        wide = [c for c in cidrs if too_wide(c)]
        if wide:
            yield Finding(
                r.urn,
                f"{KEY} {', '.join(wide)}: wider than one organisation's addresses (at most "
                "a /16 of public IPv4 or a /48 of IPv6 per entry); list your NAT gateways' "
                "or offices' CIDRs, or keep the endpoint private (an empty list) and deploy "
                "from a runner in the VPC (hyperpod-dpd:ci.runner)",
            )


RULE = Rule(
    "hyperpod-dpd-eks-endpoint",
    "EKS API not open to the internet",
    "mandatory",
    check,
    locked=True,
)
