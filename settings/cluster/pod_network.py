"""Who may open connections to an endpoint's worker pods: Kubernetes NetworkPolicies, enforced
by the VPC CNI's network policy agent (specs/isolation/network_policies.py renders them)."""

from __future__ import annotations

from pydantic import Field

from settings.config.fields import Cidr, DnsLabel, SettingsModel


class NetworkPolicyConfig(SettingsModel):
    enabled: bool = Field(
        True,
        description="Give every endpoint a NetworkPolicy that admits only its router (the "
        "operator's namespace), its own pods, the observability collector and what "
        "allowNamespaces and allowCidrs name, and turn on the VPC CNI add-on's network policy "
        "enforcement (enableNetworkPolicy). false: no policies, and the add-on keeps its default "
        "(not enforcing).",
    )
    allow_namespaces: list[DnsLabel] = Field(
        default_factory=list,
        description="More namespaces whose pods may reach every endpoint's workers directly, "
        "e.g. a gateway of your own. Requests through the router (the endpoint's URL) need "
        "nothing here.",
        examples=[["my-gateway"]],
    )
    allow_cidrs: list[Cidr] = Field(
        default_factory=list,
        description="Addresses that may reach every endpoint's workers directly, e.g. the "
        "subnets of a load balancer of your own that registers pod IPs. None by default: the "
        "private subnets also hold the system nodes' pods.",
        examples=[["10.0.96.0/24"]],
    )
