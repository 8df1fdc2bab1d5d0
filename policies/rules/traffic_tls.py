"""hyperpod-dpd-traffic-tls: the traffic split's listener is HTTPS. A plain HTTP listener
carries every prompt and completion, and the API key each request presents, in clear text
across the VPC (checkov CKV_AWS_2 / CKV_AWS_103); `hyperpod-dpd:trafficListener.certificateArn`
(with the name it covers, trafficListener.domainName) makes it HTTPS on 443 with a TLS 1.2+
policy. Advisory: a stack may run its canary on HTTP knowingly, and the plan says so."""

from __future__ import annotations

from policies.rules import views
from policies.rules.base import Finding, Rule

LISTENER = "aws:lb/listener:Listener"


def check(resources, limits):
    for r in views.of_type(resources, LISTENER):
        protocol = r.props.get("protocol")
        if protocol == "HTTP" and not views.unknown(protocol):
            yield Finding(
                r.urn,
                f"{r.name} is plain HTTP on port {r.props.get('port')}: prompts, completions "
                "and the API key cross the VPC in clear text; set "
                "hyperpod-dpd:trafficListener.certificateArn (an ACM certificate, e.g. from ACM "
                "Private CA) and trafficListener.domainName (the name it covers) for HTTPS on 443",
            )


RULE = Rule("hyperpod-dpd-traffic-tls", "The traffic split listens on HTTPS", "advisory", check)
