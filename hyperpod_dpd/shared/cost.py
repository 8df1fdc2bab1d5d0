"""The hourly cost estimate of a stack, from the repo's price table (prices.yaml) and the
stack's overrides (hyperpod-dpd:cost.hourlyPrices). Only what bills by the hour is counted."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from settings.stack import StackSettings
from settings.yaml_files import safe_load

PRICE_TABLE = Path(__file__).with_name("prices.yaml")

# A month of hours as AWS's estimates count it: 24 x 365 / 12 = 730 (the AWS Pricing Calculator,
# https://calculator.aws/, prices an always-on instance at 730 hours a month; Infracost does too).
HOURS_PER_MONTH = 730


def monthly(hourly: float) -> float:
    """An hourly cost run all month (HOURS_PER_MONTH)."""
    return hourly * HOURS_PER_MONTH


def per_hour_and_month(hourly: float) -> str:
    """'$111.15/h, about $81,140/month': the hour a platform engineer pays, the month a budget
    is written in (rounded to ten dollars: an estimate, not an invoice)."""
    return f"${hourly:,.2f}/h, about ${round(monthly(hourly), -1):,.0f}/month"


@dataclass(frozen=True)
class CostLine:
    item: str
    quantity: int
    hourly: float | None  # None: no price known (the line is listed, not added)
    source: str

    @property
    def total(self) -> float:
        return (self.hourly or 0.0) * self.quantity


def load_prices(path: Path = PRICE_TABLE) -> dict[str, dict[str, Any]]:
    return safe_load(path.read_text())["prices"]


def price_table(
    s: StackSettings, prices: dict[str, dict[str, Any]] | None = None
) -> dict[str, dict[str, Any]]:
    """item -> {hourly, source}: the repo's table under the stack's overrides, an item priced
    per Region (`byRegion`) at the stack's own Region's price."""
    table = {item: _in_region(price, s.region) for item, price in (prices or load_prices()).items()}
    for item, hourly in s.cost.hourly_prices.items():
        table[item] = {
            "hourly": hourly,
            "source": "stack override (hyperpod-dpd:cost.hourlyPrices)",
        }
    return table


def _in_region(price: dict[str, Any], region: str) -> dict[str, Any]:
    """`price` as the stack's Region pays it: its `byRegion` entry, else the table's own price,
    said to be another Region's."""
    by_region = price.get("byRegion")
    if not by_region:
        return price
    if region in by_region:
        return {
            **price,
            "hourly": by_region[region],
            "source": price["source"].format(region=region),
        }
    source = price["source"].format(region="us-east-1")
    return {**price, "source": f"{source}; none listed for {region}: set "
            "hyperpod-dpd:cost.hourlyPrices to yours"}  # fmt: skip


def hourly_cost(
    s: StackSettings, prices: dict[str, dict[str, Any]] | None = None
) -> list[CostLine]:
    table = price_table(s, prices)
    counts: dict[str, int] = {}
    for group in s.instance_groups.values():
        counts[group.instance_type] = counts.get(group.instance_type, 0) + group.instance_count
    nats = (
        1
        if s.network.nat_gateways == "single"
        else len({s.availability_zone_id, *s.network.control_plane_az_ids})
    )
    counts["eks-control-plane"] = 1
    counts["nat-gateway"] = nats
    lines = []
    for item, quantity in counts.items():
        price = table.get(item)
        lines.append(
            CostLine(
                item,
                quantity,
                price["hourly"] if price else None,
                price["source"] if price else "no price in hyperpod_dpd/shared/prices.yaml",
            )
        )
    return lines


def total(lines: list[CostLine]) -> float:
    return round(sum(line.total for line in lines), 4)
