"""hyperpod-dpd-public-ingress (policies/rules/security/public_ingress.py): an ingress rule open to
the internet, the internet split over rules of one group, and on a first preview rules
whose groups are not known yet."""

from __future__ import annotations

import copy

from policies.rules import Limits
from policies.rules.views import UNKNOWN
from tests.policies.conftest import named
from tests.policies.rules.helpers import RULES, findings


def test_ingress_from_anywhere(dev):
    named(dev, "nodes-eks-ingress").props["cidrIpv4"] = "0.0.0.0/0"
    assert [m for _, m in findings("hyperpod-dpd-public-ingress", dev)] == [
        "nodes-eks-ingress lets in 0.0.0.0/0; restrict it to the VPC or known CIDRs"
    ]


def test_ingress_split_into_halves_is_refused(dev):
    rule = named(dev, "nodes-eks-ingress").props
    rule["cidrIpv4"] = "0.0.0.0/1"
    other = copy.deepcopy(named(dev, "nodes-eks-ingress"))
    dev.append(
        type(other)(
            other.type,
            "nodes-more",
            other.urn + "-more",
            {**other.props, "cidrIpv4": "128.0.0.0/1"},
        )
    )
    found = findings("hyperpod-dpd-public-ingress", dev)
    assert len(found) == 2
    assert "with 1 more rule(s) of its group: the internet" in found[0][1]


def _second_ingress(dev, name: str, props: dict) -> None:
    other = named(dev, "nodes-eks-ingress")
    dev.append(type(other)(other.type, name, other.urn + name, {**other.props, **props}))


def test_on_a_first_preview_rules_of_unknown_groups_are_not_judged_as_one_group(dev):
    """A first preview: no group has an ID yet. Two pieces that are the internet only together
    (neither /9 alone is a /8 of public space), in rules whose groups are unknown, are not known
    to be one group's: not checkable yet, not a violation."""
    rule = named(dev, "nodes-eks-ingress").props
    rule |= {"cidrIpv4": "11.0.0.0/9", "securityGroupId": UNKNOWN}
    _second_ingress(dev, "other-ingress", {"cidrIpv4": "11.128.0.0/9", "securityGroupId": UNKNOWN})
    found = list(RULES["hyperpod-dpd-public-ingress"].check(dev, Limits()))
    assert len(found) == 2 and all(f.unchecked for f in found)
    assert found[0].message.startswith("cannot check during preview: the security group of")
    # ... but one rule open to everything is refused whatever its group.
    rule["cidrIpv4"] = "0.0.0.0/0"
    assert [(f.message, f.unchecked) for f in RULES["hyperpod-dpd-public-ingress"].check(
        dev, Limits())] == [
        ("nodes-eks-ingress lets in 0.0.0.0/0; restrict it to the VPC or known CIDRs", False)
    ]  # fmt: skip
