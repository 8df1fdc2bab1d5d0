"""hyperpod-dpd-eks-endpoint (policies/rules/security/eks_endpoint.py): an EKS API endpoint public to
the whole internet, directly or through CIDRs that only together cover it."""

from __future__ import annotations

import pytest

from tests.policies.conftest import named
from tests.policies.rules.helpers import findings


@pytest.mark.parametrize("cidrs", [[], ["0.0.0.0/0"], ["0.0.0.0/1"]])
def test_eks_endpoint_open_to_the_internet(dev, cidrs):
    vpc = named(dev, "eks-cluster").props["vpcConfig"]
    vpc["publicAccessCidrs"] = cidrs
    assert [m for _, m in findings("hyperpod-dpd-eks-endpoint", dev)] == [
        "the EKS API endpoint is public to the whole internet; list your CIDRs in "
        "hyperpod-dpd:eks.publicAccessCidrs (empty keeps it private)"
    ]


def test_two_halves_of_the_internet_are_the_internet(dev):
    vpc = named(dev, "eks-cluster").props["vpcConfig"]
    vpc["publicAccessCidrs"] = ["0.0.0.0/1", "128.0.0.0/1"]
    assert len(findings("hyperpod-dpd-eks-endpoint", dev)) == 1
    # Neither /9 alone is internet-wide (< a /8 of public space); together they are.
    vpc["publicAccessCidrs"] = ["11.0.0.0/9", "11.128.0.0/9"]
    ((_, message),) = findings("hyperpod-dpd-eks-endpoint", dev)
    assert "(11.0.0.0/9, 11.128.0.0/9 together cover it)" in message
    vpc["publicAccessCidrs"] = ["10.0.0.0/8", "11.0.0.0/16"]  # private space does not count
    assert findings("hyperpod-dpd-eks-endpoint", dev) == []


def test_no_stack_can_lower_the_rule(dev):
    """Locked: a stack's enforcement override (advisory, disabled) or advisoriesMandatory
    leaves it mandatory, in the gate and in the pack config the pipeline hands CrossGuard."""
    from policies.pack import pack_config
    from policies.rules import evaluate

    named(dev, "eks-cluster").props["vpcConfig"]["publicAccessCidrs"] = ["0.0.0.0/0"]
    for level in ("advisory", "disabled"):
        (violation,) = evaluate(dev, enforcement={"hyperpod-dpd-eks-endpoint": level})
        assert (violation.policy, violation.enforcement) == (
            "hyperpod-dpd-eks-endpoint",
            "mandatory",
        )
        config = pack_config({"hyperpod-dpd-eks-endpoint": level}, advisories_mandatory=False)
        assert config["hyperpod-dpd-eks-endpoint"] == {"enforcementLevel": "mandatory"}


@pytest.mark.parametrize("cidr", ["11.0.0.0/9", "44.0.0.0/15", "2001:db9::/40"])
def test_one_entry_wider_than_an_organisation_is_refused_alone(dev, cidr):
    """Not the internet (less than a /8 of public space), yet more than anyone's clients: a
    /9 of public IPv4 is 8 million addresses of other people's networks."""
    vpc = named(dev, "eks-cluster").props["vpcConfig"]
    vpc["publicAccessCidrs"] = ["203.0.113.0/24", cidr]
    ((_, message),) = findings("hyperpod-dpd-eks-endpoint", dev)
    assert message.startswith(f"hyperpod-dpd:eks.publicAccessCidrs {cidr}: wider than one")
    assert "at most a /16 of public IPv4 or a /48 of IPv6 per entry" in message


@pytest.mark.parametrize(
    "cidrs",
    [["44.0.0.0/16"], ["2001:db9::/48", "198.51.100.7/32"], ["10.0.0.0/8", "44.1.0.0/16"]],
)
def test_an_organisations_ranges_pass(dev, cidrs):
    """A /16 of public IPv4, a /48 of IPv6, private space of any size (it counts no public
    address)."""
    named(dev, "eks-cluster").props["vpcConfig"]["publicAccessCidrs"] = cidrs
    assert findings("hyperpod-dpd-eks-endpoint", dev) == []


def test_a_wide_entry_stays_mandatory_whatever_the_stack_says(dev):
    from policies.rules import evaluate

    named(dev, "eks-cluster").props["vpcConfig"]["publicAccessCidrs"] = ["11.0.0.0/9"]
    (violation,) = evaluate(dev, enforcement={"hyperpod-dpd-eks-endpoint": "disabled"})
    assert violation.enforcement == "mandatory"
