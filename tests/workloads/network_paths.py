"""Whether a connection reaches a pod, under a set of NetworkPolicy manifests: the Kubernetes
semantics the policies rely on, for the peers they use
(https://kubernetes.io/docs/concepts/services-networking/network-policies/):
- a pod no Ingress policy of its namespace selects takes every connection;
- a selected pod takes a connection some rule of some selecting policy admits;
- a peer's podSelector alone means pods of the policy's namespace; a namespaceSelector alone,
  every pod of the namespaces it matches (a namespace's labels include
  kubernetes.io/metadata.name); both, pods matching both; ipBlock, source addresses in its CIDR
  (the VPC CNI matches pod addresses too: they are VPC addresses);
- traffic from the pod's own node is always allowed.
Label selectors: core/label_selectors.py.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any

from core.label_selectors import selects
from core.vocabulary import NAMESPACE_NAME_LABEL


@dataclass(frozen=True)
class Pod:
    namespace: str
    labels: dict[str, str] = field(default_factory=dict)
    ip: str = "192.0.2.1"  # TEST-NET-1: in no VPC subnet
    on_same_node: bool = False


def _admits(peer: dict[str, Any], policy_namespace: str, source: Pod) -> bool:
    if "ipBlock" in peer:
        block = peer["ipBlock"]
        address = ipaddress.ip_address(source.ip)
        inside = address in ipaddress.ip_network(block["cidr"])
        return inside and not any(
            address in ipaddress.ip_network(x) for x in block.get("except", [])
        )
    pods, namespaces = peer.get("podSelector"), peer.get("namespaceSelector")
    if namespaces is None:
        namespace_ok = source.namespace == policy_namespace
    else:
        namespace_ok = selects(namespaces, {NAMESPACE_NAME_LABEL: source.namespace})
    return namespace_ok and (pods is None or selects(pods, source.labels))


def reaches(policies: list[dict[str, Any]], source: Pod, target: Pod) -> bool:
    """Whether `source` may open a connection to `target` under `policies`."""
    if source.on_same_node:
        return True
    selecting = [
        p
        for p in policies
        if p["metadata"]["namespace"] == target.namespace
        and "Ingress" in p["spec"].get("policyTypes", ["Ingress"])
        and selects(p["spec"]["podSelector"], target.labels)
    ]
    if not selecting:
        return True
    return any(
        _admits(peer, p["metadata"]["namespace"], source)
        for p in selecting
        for rule in p["spec"].get("ingress") or []
        for peer in rule.get("from") or []
    )
