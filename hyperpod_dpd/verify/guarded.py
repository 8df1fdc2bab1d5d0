"""Whether the endpoint's live NetworkPolicies guard its worker pods (a pure judge of the
policies' and the pods' JSON): the workers' own policy selects each of them, and none can reach
the instance metadata service.

The stack's workers' policy (specs/isolation/network_policies.py) selects the endpoint's pods by
the `app` label the operator sets; a pod it does not select is not restricted at all and takes
connections from any pod of the cluster. And each namespace's `no-instance-metadata` policy
(specs/isolation/instance_metadata.py) keeps every pod from 169.254.169.254, where a worker would
get its node's role. Nothing breaks without either, so nothing else would say so.

The metadata service is reachable by a pod, under Kubernetes' NetworkPolicy semantics
(https://kubernetes.io/docs/concepts/services-networking/network-policies/), unless some
policy of its namespace selects it for Egress and no rule of those policies opens
169.254.169.254, TCP port 80, to it: a rule opens it when its ports are none or include it and
its peers are none or include an ipBlock holding the address (and not excepting it); a pod or
namespace selector matches pods only.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from core.label_selectors import selects
from core.vocabulary import network_policy_name
from hyperpod_dpd.verify import causes
from hyperpod_dpd.verify.endpoint import pod_name
from hyperpod_dpd.verify.results import Check, Target

WORKERS_GUARDED = "workers guarded"
METADATA_SERVICE = ipaddress.ip_address("169.254.169.254")
METADATA_PORT = 80


def judge_guarded(
    policy: dict[str, Any] | None,
    pods: dict[str, list[dict[str, Any]]],
    target: Target,
    policies: list[dict[str, Any]] | None = None,
) -> Check:
    """Every running worker pod is selected by `policy` (the endpoint's, None: there is none)
    and kept from the metadata service by `policies` (every NetworkPolicy of the namespace)."""
    name = network_policy_name(target.name)
    context = {"name": target.name, "namespace": target.namespace}
    if policy is None:
        if target.network_policy:
            return Check.failed(
                WORKERS_GUARDED,
                f"no NetworkPolicy {name} in {target.namespace}, though the stack creates one",
                causes.WORKERS_UNGUARDED,
                **context,
            )
        return Check.skipped(WORKERS_GUARDED, f"no NetworkPolicy {name} in {target.namespace}")
    workers = [p for role_pods in pods.values() for p in role_pods]
    if not workers:
        return Check.skipped(WORKERS_GUARDED, "no running worker pods to compare")
    selector = (policy.get("spec") or {}).get("podSelector") or {}
    missed = [p for p in workers if not selects(selector, _labels(p))]
    # A pod on the node's own network is beyond any NetworkPolicy (aws/amazon-vpc-cni-k8s
    # docs/network-policy-faq.md: "Network Policies cannot be applied when using host
    # networking").
    host = [p for p in workers if (p.get("spec") or {}).get("hostNetwork")]
    if missed or host:
        shown = [f"{name} does not select {pod_name(p)} {_labels(p)}" for p in missed]
        shown += [f"{pod_name(p)} runs on the host network" for p in host]
        return Check.failed(WORKERS_GUARDED, "; ".join(shown), causes.WORKERS_UNGUARDED, **context)
    exposed = [p for p in workers if reaches_metadata(policies or [policy], _labels(p))]
    if exposed:
        shown = ", ".join(pod_name(p) for p in exposed)
        return Check.failed(
            WORKERS_GUARDED,
            f"{shown} can reach the instance metadata service ({METADATA_SERVICE})",
            causes.WORKERS_REACH_METADATA,
            **context,
        )
    return Check.ok(
        WORKERS_GUARDED,
        f"{name} selects all {len(workers)} running workers; none reaches {METADATA_SERVICE}",
    )


def reaches_metadata(policies: list[dict[str, Any]], labels: dict[str, str]) -> bool:
    """Whether a pod of `labels` may open a connection to the metadata service under
    `policies` (its namespace's)."""
    egress = [
        p
        for p in policies
        if "Egress" in _types(p.get("spec") or {})
        and selects((p.get("spec") or {}).get("podSelector") or {}, labels)
    ]
    return not egress or any(
        _opens(rule) for p in egress for rule in (p.get("spec") or {}).get("egress") or []
    )


def _types(spec: dict[str, Any]) -> list[str]:
    """A policy's types: as given, else Ingress, and Egress when it has egress rules."""
    return spec.get("policyTypes") or ["Ingress", *(["Egress"] if "egress" in spec else [])]


def _opens(rule: dict[str, Any]) -> bool:
    ports = rule.get("ports") or []
    port = not ports or any(
        p.get("protocol", "TCP") == "TCP"
        and (
            "port" not in p
            or (
                isinstance(p["port"], int)
                and p["port"] <= METADATA_PORT <= p.get("endPort", p["port"])
            )
        )
        for p in ports
    )
    peers = rule.get("to") or []
    return port and (not peers or any(_holds(peer.get("ipBlock")) for peer in peers))


def _holds(block: dict[str, Any] | None) -> bool:
    if not block:
        return False  # a pod or namespace selector: pods only
    network = ipaddress.ip_network(block["cidr"], strict=False)
    if network.version != METADATA_SERVICE.version or METADATA_SERVICE not in network:
        return False
    excepted = (ipaddress.ip_network(x, strict=False) for x in block.get("except") or [])
    return not any(METADATA_SERVICE in x for x in excepted if x.version == network.version)


def _labels(pod: dict[str, Any]) -> dict[str, str]:
    return (pod.get("metadata") or {}).get("labels") or {}
