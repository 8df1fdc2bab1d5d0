"""Whether the endpoint's live NetworkPolicy applies to its worker pods (a pure judge of the
policy's and the pods' JSON).

The stack's policy (specs/isolation/network_policies.py) selects the endpoint's pods by the
`app` label the operator sets; a pod it does not select is not restricted at all and takes
connections from any pod of the cluster. Nothing breaks, so nothing else would say so.
"""

from __future__ import annotations

from typing import Any

from core.label_selectors import selects
from core.vocabulary import network_policy_name
from hyperpod_dpd.verify import causes
from hyperpod_dpd.verify.endpoint import pod_name
from hyperpod_dpd.verify.results import Check, Target

WORKERS_GUARDED = "workers guarded"


def judge_guarded(
    policy: dict[str, Any] | None, pods: dict[str, list[dict[str, Any]]], target: Target
) -> Check:
    """Every running worker pod is selected by `policy` (the endpoint's, None: there is none)."""
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
    return Check.ok(WORKERS_GUARDED, f"{name} selects all {len(workers)} running workers")


def _labels(pod: dict[str, Any]) -> dict[str, str]:
    return (pod.get("metadata") or {}).get("labels") or {}
