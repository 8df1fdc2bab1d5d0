"""hyperpod-dpd-pod-ingress: some NetworkPolicy of an endpoint's namespace selects its worker
pods for ingress, and one of the operator's namespace selects every pod there, the routers
whatever their labels. Without the first, vLLM (listening on every address, no API key)
answers any pod of the cluster that skips the router (specs/isolation/network_policies.py);
without the second, the router, which asks for no key either, does
(specs/isolation/routers.py). The stack renders both when `hyperpod-dpd:networkPolicy.enabled`
is true, the default. Advisory: a stack may turn the policies off knowingly, e.g. while a path
it needs is closed."""

from __future__ import annotations

from core.label_selectors import selects
from core.vllm.pod_names import endpoint_pod_label_values
from core.vocabulary import ENDPOINT_POD_LABEL, NETWORK_POLICY_TYPE, OPERATOR_NAMESPACE
from policies.rules import views
from policies.rules.base import Finding, Rule

FIX = "pulumi config set --path 'hyperpod-dpd:networkPolicy.enabled' true"


def _guards(policies, namespace: str, labels: dict[str, str]) -> bool:
    """Some Ingress policy of `namespace` selects a pod of `labels`."""
    return any(
        pm.get("namespace") == namespace
        and "Ingress" in (spec.get("policyTypes") or ["Ingress"])
        and selects(spec.get("podSelector") or {}, labels)
        for pm, spec in policies
    )


def check(resources, limits):
    policies = [
        (p.props.get("metadata") or {}, p.props.get("spec") or {})
        for p in views.of_type(resources, NETWORK_POLICY_TYPE)
    ]
    endpoints = list(views.endpoints(resources))
    # The routers carry labels no public source names: only a policy that selects a pod of no
    # known label (every pod of the namespace) is sure to select them.
    if endpoints and not _guards(policies, OPERATOR_NAMESPACE, {}):
        yield Finding(
            endpoints[0].urn,
            "the endpoints' routers take connections from any pod of the cluster and ask for "
            f"no API key: no NetworkPolicy of namespace {OPERATOR_NAMESPACE} selects every "
            f"pod there; turn the policies back on (the default): {FIX}",
        )
    for iec in endpoints:
        meta = iec.props.get("metadata") or {}
        name, namespace = meta.get("name"), meta.get("namespace") or "default"
        if views.unknown(name):
            continue
        pods = [{ENDPOINT_POD_LABEL: value} for value in endpoint_pod_label_values(name)]
        if not any(_guards(policies, namespace, labels) for labels in pods):
            yield Finding(
                iec.urn,
                f"endpoint {name}'s workers take connections from any pod of the cluster, "
                "bypassing its router: no NetworkPolicy of namespace "
                f"{namespace} selects them; turn the policies back on (the default): {FIX}",
            )


RULE = Rule(
    "hyperpod-dpd-pod-ingress",
    "NetworkPolicies guard each endpoint's workers and the routers",
    "advisory",
    check,
)
