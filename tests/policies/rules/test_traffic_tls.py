"""hyperpod-dpd-traffic-tls (policies/rules/traffic_tls.py): a plain HTTP traffic listener is
named, advisory; an HTTPS one, or a stack without a split, is not."""

from __future__ import annotations

from policies.rules.base import ResourceView
from tests.policies.rules.helpers import RULES, findings

URN = "urn:pulumi:dev::hyperpod-dpd::hyperpod-dpd:workloads:TrafficSplit$aws:lb/listener:Listener::traffic-listener"


def _listener(protocol: str, port: int) -> ResourceView:
    return ResourceView(
        "aws:lb/listener:Listener", "traffic-listener", URN, {"protocol": protocol, "port": port}
    )


def test_a_plain_http_listener_is_named(dev):
    assert findings("hyperpod-dpd-traffic-tls", [*dev, _listener("HTTP", 80)]) == [
        (
            URN,
            "traffic-listener is plain HTTP on port 80: prompts, completions and the API key "
            "cross the VPC in clear text; set hyperpod-dpd:trafficListener.certificateArn (an "
            "ACM certificate, e.g. from ACM Private CA) and trafficListener.domainName (the "
            "name it covers) for HTTPS on 443",
        )
    ]
    assert RULES["hyperpod-dpd-traffic-tls"].enforcement == "advisory"


def test_https_or_no_split_passes(dev):
    assert findings("hyperpod-dpd-traffic-tls", [*dev, _listener("HTTPS", 443)]) == []
    assert findings("hyperpod-dpd-traffic-tls", dev) == []
