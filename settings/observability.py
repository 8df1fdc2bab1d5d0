"""Observability: Amazon Managed Prometheus/Grafana and the HyperPod observability add-on."""

from __future__ import annotations

from pydantic import Field

from settings.fields import SettingsModel


class ObservabilityConfig(SettingsModel):
    enabled: bool = Field(
        True,
        description="Install Amazon Managed Prometheus/Grafana and the HyperPod observability "
        "add-on.",
    )
