"""hyperpod-dpd-eks-endpoint: the EKS API is private, or public only to listed CIDRs."""

from __future__ import annotations

from policies.rules import views
from policies.rules.base import Finding, Rule


def check(resources, limits):
    for r in views.of_type(resources, "aws:eks/cluster:Cluster"):
        vpc = r.props.get("vpcConfig") or {}
        if vpc.get("endpointPublicAccess") is False:
            continue
        cidrs = vpc.get("publicAccessCidrs") or []
        if not cidrs or any(c in ("0.0.0.0/0", "::/0") for c in cidrs):
            yield Finding(
                r.urn,
                "the EKS API endpoint is public to the whole internet; list your CIDRs in "
                "hyperpod-dpd:eks.publicAccessCidrs (empty keeps it private)",
            )


RULE = Rule("hyperpod-dpd-eks-endpoint", "EKS API not open to the internet", "mandatory", check)
