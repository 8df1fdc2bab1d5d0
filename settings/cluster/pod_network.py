"""Who may open connections to an endpoint's worker pods and to the routers in front of them:
Kubernetes NetworkPolicies, enforced by the VPC CNI's network policy agent
(specs/isolation/network_policies.py and specs/isolation/routers.py render them)."""

from __future__ import annotations

import ipaddress

from pydantic import Field

from core.aws.subnets import plan_subnets
from core.problems import ConfigProblem
from settings.config.errors import full_key, set_fix
from settings.config.fields import Cidr, DnsLabel, SettingsModel


class NetworkPolicyConfig(SettingsModel):
    enabled: bool = Field(
        True,
        description="Give every endpoint a NetworkPolicy that admits only the operator's "
        "namespace (its routers), its own pods, the observability collector and what "
        "allowNamespaces and allowCidrs name; give the routers' namespace one that admits its "
        "own pods, the endpoints' and benchmark namespaces, the private subnets (the EKS "
        "control plane, the load balancers) and what clientNamespaces, allowNamespaces and "
        "allowCidrs name; give every namespace the stack runs pods in one that keeps its pods "
        "from the instance metadata service (the nodes' IAM role); and turn on the VPC CNI "
        "add-on's network policy enforcement (enableNetworkPolicy). false: no policies, and "
        "the add-on keeps its default (not enforcing).",
    )
    allow_namespaces: list[DnsLabel] = Field(
        default_factory=list,
        description="More namespaces whose pods may reach every endpoint's workers directly, "
        "e.g. a gateway of your own (they reach the routers too). A client that calls the "
        "router (the endpoint's in-cluster URL) needs only clientNamespaces.",
        examples=[["my-gateway"]],
    )
    client_namespaces: list[DnsLabel] = Field(
        default_factory=list,
        description="Namespaces whose pods may call the endpoints' routers (their in-cluster "
        "URL) besides the stack's benchmark namespace. The routers ask for no API key (only "
        "the traffic split does): list only namespaces whose pods may prompt the models.",
        examples=[["my-app"]],
    )
    allow_cidrs: list[Cidr] = Field(
        default_factory=list,
        description="Addresses that may reach every endpoint's workers directly, e.g. the "
        "subnets of a load balancer of your own that registers pod IPs. None by default: the "
        "private subnets also hold the system nodes' pods.",
        examples=[["10.0.96.0/24"]],
    )


def check_network_policy(
    policy: NetworkPolicyConfig, vpc_cidr: str, gpu_az_id: str, control_plane_az_ids: list[str]
) -> list[ConfigProblem]:
    """allowCidrs that would reach into the GPU subnet admit every pod there (each endpoint's
    workers and any other GPU pod): that is turning the policies off, said plainly."""
    if not policy.enabled:
        return []  # no policy renders the CIDRs
    (gpu,) = [
        ipaddress.ip_network(p.cidr)
        for p in plan_subnets(vpc_cidr, gpu_az_id, control_plane_az_ids)
        if p.tier == "gpu"
    ]
    problems = []
    for i, cidr in enumerate(policy.allow_cidrs):
        if ipaddress.ip_network(cidr).overlaps(gpu):
            key = full_key(("networkPolicy", "allowCidrs", i))
            problems.append(
                ConfigProblem(
                    key,
                    cidr,
                    f"addresses outside the GPU subnet {gpu}, whose addresses are the GPU pods' "
                    "(admitting them lets any pod there skip the router)",
                    "name the load balancer's own subnets; to open the workers to every pod, "
                    + set_fix(full_key(("networkPolicy", "enabled")), False),
                )
            )
    return problems
