"""Observability: Amazon Managed Prometheus/Grafana and the HyperPod observability add-on."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from settings.config.fields import ALERT_TARGET_PATTERN, SettingsModel, matching


class ObservabilityConfig(SettingsModel):
    enabled: bool = Field(
        True,
        description="Install Amazon Managed Prometheus/Grafana and the HyperPod observability "
        "add-on.",
    )
    alert_subscriptions: list[Annotated[str, matching(ALERT_TARGET_PATTERN)]] = Field(
        default_factory=list,
        description="Who the SLO alerts reach: email addresses (SNS mails a link to confirm) and "
        "HTTPS URLs, each an SNS subscription of the alerts topic (the stack output "
        "alertsTopicArn), which the Prometheus workspace's alert manager sends to.",
        examples=[["oncall@example.com"]],
    )
