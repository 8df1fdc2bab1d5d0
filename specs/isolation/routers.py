"""Who may open connections to the routers: the NetworkPolicy of their namespace, the operator's.

The operator creates every endpoint's router in its own namespace (hyperpod-inference-system,
core/vocabulary.py RouterService), behind a Service every pod of the cluster could call, and the
router asks for no API key (the traffic split's listener does, specs/traffic/__init__.py says why the
router and the workers cannot). Without a policy, any pod reaches the models through it.

Selected: every pod of the namespace (`podSelector: {}`). No public source names the labels of
the router pods (the AWS DPD docs give their names, `<name>-<namespace>-router-XXXX`, not their
labels; the operator's source is not public), so a selector of routers could miss them and fail
open. The namespace also holds the operator, its KEDA and its load balancer controller, whose
webhooks and metrics API the EKS control plane calls: those must stay reachable, or creating an
InferenceEndpointConfig, a TargetGroupBinding or reading KEDA's external metrics fails.
Admitted, on every port:
- the namespace's own pods (the operator, KEDA's operator and metrics server, the routers);
- the endpoints' namespaces (only the operator's pods run there, specs/isolation/admission.py:
  a router's workers report to it in kvaware routing), the stack's benchmark namespace (the
  benchmark Job and `verify`'s prompts), the observability collector (when observability is on),
  and the namespaces `networkPolicy.clientNamespaces` and `allowNamespaces` name;
- the private subnets, by address: the EKS control plane reaches the webhooks from its
  cross-account network interfaces, which EKS places in the cluster's subnets ("Amazon EKS
  networking requirements", https://docs.aws.amazon.com/eks/latest/userguide/network-reqs.html;
  the API's VpcConfigResponse: the cross-account interfaces "allow communication between your
  nodes and the Kubernetes control plane",
  https://docs.aws.amazon.com/eks/latest/APIReference/API_VpcConfigResponse.html), here the
  private subnets (specs/eks.py). The traffic split's load balancer is there too (the targets it
  registers are the router pods, specs/traffic/__init__.py), and so are internal load balancers the
  controller places (subnets tagged kubernetes.io/role/internal-elb: the operator's own, which
  `verify` checks). The system nodes' pods take their addresses there as well: a pod of any
  namespace scheduled on a system node passes this policy. What it closes is the GPU subnet,
  where the endpoints' nodes are and any other GPU pod of the cluster runs;
- the addresses in `networkPolicy.allowCidrs`.
Always allowed whatever the policy: traffic from the pod's own node (kubelet probes: the agent
adds the node's address to every policy, aws/aws-network-policy-agent
pkg/fwruleprocessor/fw_rule_processor.go, "Traffic from the local node should always be
allowed"). Only Ingress: the routers' egress stays open (specs/isolation/instance_metadata.py says why the
stack does not close the metadata service to their namespace).
"""

from __future__ import annotations

from typing import Any

from core.aws.subnets import plan_subnets
from core.vocabulary import (
    BENCHMARK_NAMESPACE,
    OBSERVABILITY_NAMESPACE,
    OPERATOR_NAMESPACE,
    ROUTERS_POLICY,
)
from settings.stack import StackSettings
from specs.base import Desired
from specs.isolation.network_policies import namespace_peer, policy_desired


def private_cidrs(s: StackSettings) -> list[str]:
    """The private subnets' CIDRs (core/aws/subnets.py): where the control plane's interfaces,
    the load balancers and the system nodes are."""
    plans = plan_subnets(
        s.network.vpc_cidr, s.availability_zone_id, list(s.network.control_plane_az_ids)
    )
    return [p.cidr for p in plans if p.tier == "private"]


def client_namespaces(s: StackSettings) -> list[str]:
    """The namespaces whose pods may call the routers, in order, each once."""
    policy = s.network_policy
    names = [
        *sorted({x.config.namespace for x in s.entries()}),
        BENCHMARK_NAMESPACE,
        *([OBSERVABILITY_NAMESPACE] if s.observability.enabled else []),
        *policy.client_namespaces,
        *policy.allow_namespaces,
    ]
    return [n for n in dict.fromkeys(names) if n != OPERATOR_NAMESPACE]


def router_ingress(name: str, parents: tuple[str, ...], s: StackSettings) -> Desired | None:
    """The NetworkPolicy `{name}` of the routers' namespace; None when the stack enforces no
    NetworkPolicies (`networkPolicy.enabled` false)."""
    if not s.network_policy.enabled:
        return None
    peers: list[dict[str, Any]] = [{"podSelector": {}}]  # the namespace's own pods
    peers += [namespace_peer(n) for n in client_namespaces(s)]
    cidrs = [*private_cidrs(s), *s.network_policy.allow_cidrs]
    peers += [{"ipBlock": {"cidr": c}} for c in dict.fromkeys(cidrs)]
    spec = {"podSelector": {}, "policyTypes": ["Ingress"], "ingress": [{"from": peers}]}
    return policy_desired(name, parents, ROUTERS_POLICY, OPERATOR_NAMESPACE, spec)
