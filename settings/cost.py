"""The plan's cost estimate: hourly price overrides."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from settings.config.fields import Decimal, SettingsModel


class CostConfig(SettingsModel):
    hourly_prices: dict[str, Annotated[Decimal, Field(ge=0)]] = Field(
        default_factory=dict,
        description="Hourly USD price overrides for the plan's cost estimate, keyed like "
        "hyperpod_dpd/shared/prices.yaml (instance types, eks-control-plane, nat-gateway).",
    )
