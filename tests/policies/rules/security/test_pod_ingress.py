"""hyperpod-dpd-pod-ingress (policies/rules/security/pod_ingress.py): an endpoint no
NetworkPolicy of its namespace selects is named, advisory; the stack's own policy passes, and a
policy of another namespace or one selecting other pods does not count."""

from __future__ import annotations

import pytest

from core.vocabulary import NETWORK_POLICY_TYPE
from tests.policies.conftest import named
from tests.policies.rules.helpers import IEC_URN, RULES, findings

RULE = "hyperpod-dpd-pod-ingress"


def _without_policies(views):
    return [v for v in views if v.type != NETWORK_POLICY_TYPE]


def test_the_stacks_own_policy_guards_the_endpoint(dev):
    assert findings(RULE, dev) == []


def test_an_endpoint_without_a_policy_is_named(dev):
    iec = named(dev, "endpoint-iec").props["metadata"]
    assert findings(RULE, _without_policies(dev)) == [
        (IEC_URN, ROUTERS_MESSAGE),
        (
            IEC_URN,
            f"endpoint {iec['name']}'s workers take connections from any pod of the cluster, "
            f"bypassing its router: no NetworkPolicy of namespace {iec['namespace']} selects "
            "them; turn the policies back on (the default): pulumi config set --path "
            "'hyperpod-dpd:networkPolicy.enabled' true",
        ),
    ]
    assert RULES[RULE].enforcement == "advisory"


CHANGES = {
    "another-namespace": lambda p: p["metadata"].update(namespace="elsewhere"),
    "other-pods": lambda p: p["spec"].update(podSelector={"matchLabels": {"app": "another"}}),
    "egress-only": lambda p: p["spec"].update(policyTypes=["Egress"]),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_policy_that_does_not_guard_these_workers_does_not_count(dev, change):
    CHANGES[change](named(dev, "endpoint-network-policy").props)
    assert len(findings(RULE, dev)) == 1


ROUTERS_MESSAGE = (
    "the endpoints' routers take connections from any pod of the cluster and ask for no API "
    "key: no NetworkPolicy of namespace hyperpod-inference-system selects every pod there; "
    "turn the policies back on (the default): pulumi config set --path "
    "'hyperpod-dpd:networkPolicy.enabled' true"
)


def test_without_the_routers_policy_the_routers_are_named(dev):
    views = [v for v in dev if v.name != "routers-ingress"]
    assert findings(RULE, views) == [(IEC_URN, ROUTERS_MESSAGE)]


@pytest.mark.parametrize(
    "selector",
    [
        {"matchLabels": {"app": "router"}},
        {"matchExpressions": [{"key": "x", "operator": "Exists"}]},
    ],
)
def test_a_routers_policy_that_guesses_their_labels_does_not_count(dev, selector):
    """No public source names the routers' labels: a selector that needs one may miss them."""
    named(dev, "routers-ingress").props["spec"]["podSelector"] = selector
    assert findings(RULE, dev) == [(IEC_URN, ROUTERS_MESSAGE)]
