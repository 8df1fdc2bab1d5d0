"""hyperpod-dpd-public-ingress: no security group ingress from 0.0.0.0/0 or ::/0."""

from __future__ import annotations

from policies.rules import views
from policies.rules.base import Finding, Rule

OPEN = ("0.0.0.0/0", "::/0")


def check(resources, limits):
    for r in views.of_type(resources, "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"):
        cidr = r.props.get("cidrIpv4") or r.props.get("cidrIpv6")
        if cidr in OPEN:
            yield Finding(r.urn, f"{r.name} lets in {cidr}; restrict it to the VPC or known CIDRs")
    for r in views.of_type(resources, "aws:ec2/securityGroup:SecurityGroup"):
        for rule in r.props.get("ingress") or []:
            cidrs = (rule.get("cidrBlocks") or []) + (rule.get("ipv6CidrBlocks") or [])
            if any(c in OPEN for c in cidrs):
                yield Finding(r.urn, f"{r.name} has an ingress rule open to the internet")


RULE = Rule("hyperpod-dpd-public-ingress", "No ingress from anywhere", "mandatory", check)
