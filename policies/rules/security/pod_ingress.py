"""hyperpod-dpd-pod-ingress: some NetworkPolicy of an endpoint's namespace selects its worker
pods for ingress. Without one, vLLM (listening on every address, no API key) answers any pod of
the cluster that skips the router (specs/isolation/network_policies.py, which the stack renders
when `hyperpod-dpd:networkPolicy.enabled` is true, the default). Advisory: a stack may turn the
policies off knowingly, e.g. while a path it needs is closed."""

from __future__ import annotations

from core.label_selectors import selects
from core.vllm.pod_names import endpoint_pod_label_values
from core.vocabulary import ENDPOINT_POD_LABEL, NETWORK_POLICY_TYPE
from policies.rules import views
from policies.rules.base import Finding, Rule


def check(resources, limits):
    policies = [
        (p.props.get("metadata") or {}, p.props.get("spec") or {})
        for p in views.of_type(resources, NETWORK_POLICY_TYPE)
    ]
    for iec in views.endpoints(resources):
        meta = iec.props.get("metadata") or {}
        name, namespace = meta.get("name"), meta.get("namespace") or "default"
        if views.unknown(name):
            continue
        pods = [{ENDPOINT_POD_LABEL: value} for value in endpoint_pod_label_values(name)]
        guarded = any(
            pm.get("namespace") == namespace
            and "Ingress" in (spec.get("policyTypes") or ["Ingress"])
            and any(selects(spec.get("podSelector") or {}, labels) for labels in pods)
            for pm, spec in policies
        )
        if not guarded:
            yield Finding(
                iec.urn,
                f"endpoint {name}'s workers take connections from any pod of the cluster, "
                "bypassing its router: no NetworkPolicy of namespace "
                f"{namespace} selects them; turn the policies back on (the default): pulumi config "
                "set --path 'hyperpod-dpd:networkPolicy.enabled' true",
            )


RULE = Rule(
    "hyperpod-dpd-pod-ingress",
    "A NetworkPolicy guards each endpoint's workers",
    "advisory",
    check,
)
