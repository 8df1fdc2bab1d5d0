"""hyperpod-dpd-routing-strategy (advisory): with several prefill replicas, prefix- and KV-aware
routing concentrate load on one prefiller unless prompts share prefixes; roundrobin spreads it."""

from __future__ import annotations

from policies.rules import views
from policies.rules.base import Finding, Rule


def check(resources, limits):
    for iec in views.endpoints(resources):
        if views.pd_spec(iec) is None:
            continue
        replicas = views.as_int(views.role_spec(iec, "prefill").get("replicas", 1)) or 1
        strategy = (views.spec(iec).get("intelligentRoutingSpec") or {}).get("routingStrategy")
        if replicas > 1 and strategy in ("prefixaware", "kvaware"):
            yield Finding(
                iec.urn,
                f"{replicas} prefill replicas with routingStrategy {strategy}: unless prompts "
                f"share prefixes, set {views.endpoint_key(iec, 'routingStrategy')} to roundrobin",
            )


RULE = Rule(
    "hyperpod-dpd-routing-strategy", "roundrobin for several prefill replicas", "advisory", check
)
