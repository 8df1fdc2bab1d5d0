"""hyperpod-dpd-public-ingress: no security group lets in the internet. The ingress CIDRs of
each group are judged together (their union, public space only: core/aws/cidrs.py), so splitting
0.0.0.0/0 into pieces does not pass.

On a first preview a group created by the same program has no ID yet, so which rules share a
group is not known: each such rule is judged alone (0.0.0.0/0 is refused), and pieces that
would cover the internet only together are reported as not checkable yet (advisory) rather
than refused as if they were one group's."""

from __future__ import annotations

from collections import defaultdict

from core.aws.cidrs import internet_wide
from core.vocabulary import SECURITY_GROUP_TYPE, SG_INGRESS_TYPE
from policies.rules import views
from policies.rules.base import Finding, Rule


def check(resources, limits):
    by_group: dict[str, list] = defaultdict(list)
    loose = []  # rules whose group's ID is unknown (first preview)
    for r in views.of_type(resources, SG_INGRESS_TYPE):
        cidr = r.props.get("cidrIpv4") or r.props.get("cidrIpv6")
        if not cidr:
            continue
        group = r.props.get("securityGroupId")
        if views.unknown(group):
            loose.append((r, str(cidr)))
        else:
            by_group[str(group)].append((r, str(cidr)))
    yield from _loose(loose)
    for rules in by_group.values():
        cidrs = [c for _, c in rules]
        if internet_wide(cidrs):
            for r, cidr in rules:
                if internet_wide([cidr]) or len(rules) > 1:
                    yield Finding(
                        r.urn,
                        f"{r.name} lets in {cidr}"
                        + (
                            f" (with {len(rules) - 1} more rule(s) of its group: the internet)"
                            if len(rules) > 1
                            else ""
                        )
                        + "; restrict it to the VPC or known CIDRs",
                    )
    for r in views.of_type(resources, SECURITY_GROUP_TYPE):
        cidrs = []
        for rule in r.props.get("ingress") or []:
            cidrs += (rule.get("cidrBlocks") or []) + (rule.get("ipv6CidrBlocks") or [])
        if internet_wide(str(c) for c in cidrs):
            yield Finding(r.urn, f"{r.name} has ingress rules open to the internet")


def _loose(rules):
    alone = [(r, cidr) for r, cidr in rules if internet_wide([cidr])]
    for r, cidr in alone:
        yield Finding(r.urn, f"{r.name} lets in {cidr}; restrict it to the VPC or known CIDRs")
    pieces = [(r, cidr) for r, cidr in rules if (r, cidr) not in alone]
    if len(pieces) > 1 and internet_wide(c for _, c in pieces):
        for r, _ in pieces:
            yield views.unchecked(
                r.urn,
                f"the security group of {r.name} (its CIDRs and those of {len(pieces) - 1} "
                "more rule(s) cover the internet if they share one group)",
            )


RULE = Rule("hyperpod-dpd-public-ingress", "No ingress from anywhere", "mandatory", check)
