"""An endpoint's NetworkPolicy: who may open connections to its worker pods.

vLLM listens on every address with no API key, and every HyperPod node is in one security group
that admits itself (specs/nodes.py: EFA needs it), so without a policy any pod in the cluster can
skip the router and prompt the workers. The VPC CNI enforces NetworkPolicies once its add-on is
configured with `enableNetworkPolicy: "true"` (specs/eks.py addon_configuration); Kubernetes
semantics: a pod a policy selects for Ingress takes only what some rule admits
(https://kubernetes.io/docs/concepts/services-networking/network-policies/).

Selected: the endpoint's pods, by the label the operator puts on them (`app=<name>`,
core/vocabulary.py ENDPOINT_POD_LABEL), or the names of its Deployments (`prefill-<name>`,
`decode-<name>`) in case a DPD role's pods carry those instead
(core/vllm/pod_names.py endpoint_pod_label_values): a pod carrying none of them is not selected
and so not restricted (the policy fails open, never shut; `hyperpod-dpd verify` fails "workers
guarded" then). Admitted, on every port (the operator adds sidecars of its own, such as a reverse proxy,
whose ports it does not document):
- the operator's namespace: each endpoint's router, the operator, its KEDA and load balancer
  controller (the AWS DPD docs: the router "in hyperpod-inference-system");
- the endpoint's own pods, and every DPD role pod of its namespace
  (inference.sagemaker.aws.amazon.com/dpd-role, whatever its `app` label): prefill and decode
  exchange NIXL's side channel and LMCache's control messages over TCP. Endpoints that share a
  namespace share this door: give an endpoint a namespace of its own to close it;
- the observability add-on's collector, which scrapes the workers' metrics (when
  observability is on);
- the namespaces in `networkPolicy.allowNamespaces`;
- the VPC's private and public subnets: the load balancers the operator creates for an endpoint
  register pod IPs as targets, so their health checks and requests come from their own
  addresses there, as do the EKS control plane's (its ENIs are in the private subnets). The GPU
  subnet, where every GPU pod's address lies, is not among them: another endpoint's workers
  cannot reach these. Pods on the system nodes (private subnets) can, by address; the stack runs
  only operators there.
Always allowed whatever the policy: traffic from the pod's own node (kubelet probes; Kubernetes
network-policies page: "traffic to and from the node where a Pod is running is always
allowed"). Not affected: EFA. The KV cache moves over EFA's SRD, which bypasses the kernel, so
neither conntrack nor a NetworkPolicy sees it; the nodes' security group is its only guard.
Egress is not restricted here (the nodes' security group limits it to HTTPS and DNS outside the
cluster).
"""

from __future__ import annotations

from typing import Any

from core.aws.subnets import plan_subnets
from core.vllm.pod_names import endpoint_pod_label_values
from core.vocabulary import (
    DPD_ROLE_POD_LABEL,
    ENDPOINT_POD_LABEL,
    NAMESPACE_NAME_LABEL,
    NETWORK_POLICY_TYPE,
    OBSERVABILITY_NAMESPACE,
    OPERATOR_NAMESPACE,
    network_policy_name,
)
from settings.stack import StackSettings
from specs.base import Desired

# The subnets whose addresses are load balancers' and the control plane's, never a GPU pod's.
LOAD_BALANCER_TIERS = ("private", "public")


def admitted(s: StackSettings) -> list[dict[str, Any]]:
    """The peers every endpoint's workers admit besides the endpoint's own pods (which
    network_policy adds: it knows the endpoint), as NetworkPolicy peers."""
    peers = [
        _namespace(OPERATOR_NAMESPACE),  # the routers
        {"podSelector": {"matchExpressions": [_exists(DPD_ROLE_POD_LABEL)]}},
    ]
    if s.observability.enabled:
        peers.append(_namespace(OBSERVABILITY_NAMESPACE))
    peers += [_namespace(n) for n in s.network_policy.allow_namespaces]
    plans = plan_subnets(
        s.network.vpc_cidr, s.availability_zone_id, list(s.network.control_plane_az_ids)
    )
    peers += [{"ipBlock": {"cidr": p.cidr}} for p in plans if p.tier in LOAD_BALANCER_TIERS]
    return peers


def network_policy(
    name: str, parents: tuple[str, ...], s: StackSettings, endpoint: str, namespace: str
) -> Desired:
    """The NetworkPolicy `{name}` of endpoint `endpoint` in `namespace`."""
    own = {"matchExpressions": [_in(ENDPOINT_POD_LABEL, endpoint_pod_label_values(endpoint))]}
    sources = [{"podSelector": own}, *admitted(s)]
    return Desired(
        NETWORK_POLICY_TYPE,
        name,
        parents,
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": {"name": network_policy_name(endpoint), "namespace": namespace},
            "spec": {
                "podSelector": own,
                "policyTypes": ["Ingress"],
                "ingress": [{"from": sources}],
            },
        },
    )


def _namespace(namespace: str) -> dict[str, Any]:
    return {"namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: namespace}}}


def _exists(key: str) -> dict[str, Any]:
    return {"key": key, "operator": "Exists"}


def _in(key: str, values: tuple[str, ...]) -> dict[str, Any]:
    return {"key": key, "operator": "In", "values": list(values)}
