"""The NAT gateway's hourly price is the stack's own Region's (hyperpod_dpd/shared/prices.yaml
byRegion), and a Region not listed is said to be estimated at another's."""

from __future__ import annotations

from hyperpod_dpd.shared.cost import hourly_cost
from settings import parse_settings
from tests.conftest import stack_raw


def _nat(region: str):
    settings = parse_settings(stack_raw("dev")).model_copy(update={"region": region})
    return next(line for line in hourly_cost(settings) if line.item == "nat-gateway")


def test_the_nat_price_names_the_stacks_region():
    for region in ("us-east-2", "us-west-2"):
        line = _nat(region)
        assert line.hourly == 0.045 and f"NAT gateway hour, {region}" in line.source
        assert "us-east-1" not in line.source


def test_a_region_without_a_listed_price_says_whose_price_it_is():
    line = _nat("eu-west-1")
    assert "NAT gateway hour, us-east-1" in line.source
    assert "none listed for eu-west-1: set hyperpod-dpd:cost.hourlyPrices" in line.source
