"""Whether a connection reaches a pod, or leaves one, under a set of NetworkPolicy manifests: the
Kubernetes semantics the policies rely on, for the peers they use
(https://kubernetes.io/docs/concepts/services-networking/network-policies/):
- a pod no Ingress policy of its namespace selects takes every connection; a pod no Egress
  policy selects opens every connection;
- a selected pod takes (opens) a connection some rule of some selecting policy of that type
  admits ("isolated for egress ... the only allowed connections from the pod are those allowed
  by the egress list of some NetworkPolicy that applies to the pod");
- a policy's types are its policyTypes; without them, Ingress, and Egress if it has egress rules;
- a rule admits a connection when one of its peers matches the other end (no peers: any end)
  and one of its ports matches the connection's port and protocol (no ports: any; protocol TCP
  unless named; `endPort` makes a range);
- a peer's podSelector alone means pods of the policy's namespace; a namespaceSelector alone,
  every pod of the namespaces it matches (a namespace's labels include
  kubernetes.io/metadata.name); both, pods matching both; ipBlock, addresses in its CIDR and in
  none of its `except` CIDRs, of the same IP family (the VPC CNI matches pod addresses too: they
  are VPC addresses);
- traffic to and from the pod's own node is always allowed.
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


@dataclass(frozen=True)
class Address:
    """An end that is no pod: a Service of AWS, the metadata service, a host on the internet."""

    ip: str
    on_same_node: bool = False


def _in_block(block: dict[str, Any], ip: str) -> bool:
    address = ipaddress.ip_address(ip)
    network = ipaddress.ip_network(block["cidr"])
    if address.version != network.version:
        return False
    excepted = (ipaddress.ip_network(x) for x in block.get("except", []))
    return address in network and not any(address in x for x in excepted)


def _admits(peer: dict[str, Any], policy_namespace: str, source: Pod | Address) -> bool:
    if "ipBlock" in peer:
        return _in_block(peer["ipBlock"], source.ip)
    if isinstance(source, Address):
        return False  # a pod or namespace selector matches pods only
    pods, namespaces = peer.get("podSelector"), peer.get("namespaceSelector")
    if namespaces is None:
        namespace_ok = source.namespace == policy_namespace
    else:
        namespace_ok = selects(namespaces, {NAMESPACE_NAME_LABEL: source.namespace})
    return namespace_ok and (pods is None or selects(pods, source.labels))


def _types(policy: dict[str, Any]) -> list[str]:
    spec = policy["spec"]
    return spec.get("policyTypes") or ["Ingress", *(["Egress"] if "egress" in spec else [])]


def _selecting(policies: list[dict[str, Any]], kind: str, pod: Pod) -> list[dict[str, Any]]:
    return [
        p
        for p in policies
        if p["metadata"]["namespace"] == pod.namespace
        and kind in _types(p)
        and selects(p["spec"]["podSelector"], pod.labels)
    ]


def _port_matches(ports: list[dict[str, Any]] | None, port: int, protocol: str) -> bool:
    return not ports or any(
        p.get("protocol", "TCP") == protocol
        and ("port" not in p or p["port"] <= port <= p.get("endPort", p["port"]))
        for p in ports
    )


def _rule_admits(
    rule: dict[str, Any],
    peers_key: str,
    namespace: str,
    end: Pod | Address,
    port: int,
    protocol: str,
) -> bool:
    peers = rule.get(peers_key) or []
    return _port_matches(rule.get("ports"), port, protocol) and (
        not peers or any(_admits(peer, namespace, end) for peer in peers)
    )


# A policy type: its rules' key and their peers' key.
_SIDES = {"Ingress": ("ingress", "from"), "Egress": ("egress", "to")}


def _allowed(
    policies: list[dict[str, Any]], kind: str, pod: Pod, other: Pod | Address, port: int,
    protocol: str,
) -> bool:  # fmt: skip
    """Whether `pod`'s policies of type `kind` let it take (Ingress) or open (Egress) a
    connection with `other`."""
    if other.on_same_node:
        return True
    rules, peers = _SIDES[kind]
    selecting = _selecting(policies, kind, pod)
    return not selecting or any(
        _rule_admits(rule, peers, p["metadata"]["namespace"], other, port, protocol)
        for p in selecting
        for rule in p["spec"].get(rules) or []
    )


def reaches(
    policies: list[dict[str, Any]], source: Pod | Address, target: Pod, port: int = 8000,
    protocol: str = "TCP",
) -> bool:  # fmt: skip
    """Whether `target` takes a connection from `source` under `policies` (its Ingress side)."""
    return _allowed(policies, "Ingress", target, source, port, protocol)


def leaves(
    policies: list[dict[str, Any]], source: Pod, target: Pod | Address, port: int = 443,
    protocol: str = "TCP",
) -> bool:  # fmt: skip
    """Whether `source` may open a connection to `target` under `policies` (its Egress side)."""
    return _allowed(policies, "Egress", source, target, port, protocol)


def connects(
    policies: list[dict[str, Any]], source: Pod, target: Pod, port: int = 8000,
    protocol: str = "TCP",
) -> bool:  # fmt: skip
    """A connection from pod to pod: both ends' policies must allow it."""
    return leaves(policies, source, target, port, protocol) and reaches(
        policies, source, target, port, protocol
    )
