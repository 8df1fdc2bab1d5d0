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
guarded" then). Admitted, on every port (the operator adds sidecars of its own, such as a
reverse proxy, whose ports it does not document):
- the operator's namespace: each endpoint's router, the operator, its KEDA and load balancer
  controller (the AWS DPD docs: the router "in hyperpod-inference-system");
- the endpoint's own pods, and every DPD role pod of its namespace
  (inference.sagemaker.aws.amazon.com/dpd-role, whatever its `app` label): prefill and decode
  exchange NIXL's side channel and LMCache's control messages over TCP. Endpoints that share a
  namespace share this door: give an endpoint a namespace of its own to close it;
- the observability add-on's collector, which scrapes the workers' metrics (when
  observability is on);
- the namespaces in `networkPolicy.allowNamespaces`;
- the CIDRs in `networkPolicy.allowCidrs` (none by default).
No address range is admitted by default, not even the load balancers' subnets: the system
nodes' pods take their addresses there too, so any pod of any namespace that lands on a system
node would pass. Requests reach the workers through the router: intelligent routing is always on
(specs/iec.py), the AWS DPD docs invoke an endpoint at its router's Service, and the router picks
the prefill and decode workers itself (conditional routing, prefix-aware selection), which a load
balancer sending to the workers directly would bypass. So the operator's load balancer is taken
to front the router, as the traffic split's does (specs/traffic/__init__.py); no public document says
which pods it registers. Should one reach workers by pod IP (its targets unhealthy, the endpoint
never ready), name its subnets in `networkPolicy.allowCidrs`.
Always allowed whatever the policy: traffic from the pod's own node (kubelet probes; Kubernetes
network-policies page: "traffic to and from the node where a Pod is running is always
allowed"). Not affected: EFA. The KV cache moves over EFA's SRD, which bypasses the kernel, so
neither conntrack nor a NetworkPolicy sees it; the nodes' security group is its only guard.
Egress is not restricted here (the nodes' security group limits it to HTTPS and DNS outside the
cluster).
"""

from __future__ import annotations

from typing import Any

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


def admitted(s: StackSettings) -> list[dict[str, Any]]:
    """The peers every endpoint's workers admit besides the endpoint's own pods (which
    network_policy adds: it knows the endpoint), as NetworkPolicy peers."""
    peers = [
        namespace_peer(OPERATOR_NAMESPACE),  # the routers
        {"podSelector": {"matchExpressions": [_exists(DPD_ROLE_POD_LABEL)]}},
    ]
    if s.observability.enabled:
        peers.append(namespace_peer(OBSERVABILITY_NAMESPACE))
    peers += [namespace_peer(n) for n in s.network_policy.allow_namespaces]
    peers += [{"ipBlock": {"cidr": cidr}} for cidr in s.network_policy.allow_cidrs]
    return peers


def network_policy(
    name: str, parents: tuple[str, ...], s: StackSettings, endpoint: str, namespace: str
) -> Desired:
    """The NetworkPolicy `{name}` of endpoint `endpoint` in `namespace`."""
    own = {"matchExpressions": [_in(ENDPOINT_POD_LABEL, endpoint_pod_label_values(endpoint))]}
    sources = [{"podSelector": own}, *admitted(s)]
    spec = {"podSelector": own, "policyTypes": ["Ingress"], "ingress": [{"from": sources}]}
    return policy_desired(name, parents, network_policy_name(endpoint), namespace, spec)


def policy_desired(
    name: str, parents: tuple[str, ...], policy: str, namespace: str, spec: dict[str, Any]
) -> Desired:
    """The NetworkPolicy `policy` of `namespace` (resource `name`) with `spec`."""
    return Desired(
        NETWORK_POLICY_TYPE,
        name,
        parents,
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": {"name": policy, "namespace": namespace},
            "spec": spec,
        },
    )


def namespace_peer(namespace: str) -> dict[str, Any]:
    """A NetworkPolicy peer: every pod of `namespace`."""
    return {"namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: namespace}}}


def _exists(key: str) -> dict[str, Any]:
    return {"key": key, "operator": "Exists"}


def _in(key: str, values: tuple[str, ...]) -> dict[str, Any]:
    return {"key": key, "operator": "In", "values": list(values)}
