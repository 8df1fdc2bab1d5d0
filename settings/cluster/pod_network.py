"""Who may open connections to an endpoint's worker pods: Kubernetes NetworkPolicies, enforced
by the VPC CNI's network policy agent (specs/isolation/network_policies.py renders them)."""

from __future__ import annotations

from pydantic import Field

from settings.config.fields import DnsLabel, SettingsModel


class NetworkPolicyConfig(SettingsModel):
    enabled: bool = Field(
        True,
        description="Give every endpoint a NetworkPolicy that admits only its router (the "
        "operator's namespace), its own pods, the observability collector, the namespaces in "
        "allowNamespaces and the load balancers' subnets, and turn on the VPC CNI add-on's "
        "network policy enforcement (enableNetworkPolicy). false: no policies, and the add-on "
        "keeps its default (not enforcing).",
    )
    allow_namespaces: list[DnsLabel] = Field(
        default_factory=list,
        description="More namespaces whose pods may reach every endpoint's workers directly, "
        "e.g. a gateway of your own. Requests through the router (the endpoint's URL) need "
        "nothing here.",
        examples=[["my-gateway"]],
    )
