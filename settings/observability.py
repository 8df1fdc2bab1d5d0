"""Observability: Amazon Managed Prometheus/Grafana and the HyperPod observability add-on, and who
the SLO alerts reach (specs/slo/alerting.py: one SNS subscription per entry)."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlsplit

from email_validator import EmailNotValidError, validate_email
from pydantic import AfterValidator, Field

from settings.config.fields import ALERT_TARGET_PATTERN, SettingsModel, Suggested, matching
from settings.config.unique import Once, SameAs

HTTPS = "https://"


def _alert_target(value: str) -> str:
    """An HTTPS URL with a host, or an email address as SNS takes one: an RFC 5322 addr-spec
    (local-part@domain), read by email-validator without DNS lookups. `mailto:x@y` is a URI,
    not an address: SNS would mail a confirmation to no one."""
    if value.startswith(HTTPS):
        if not urlsplit(value).hostname:
            raise Suggested("an HTTPS URL with a host, e.g. https://alerts.example.com/sns")
        return value
    try:
        validate_email(value, check_deliverability=False)
    except EmailNotValidError as exc:
        bare = value.split(":", 1)[1] if value.lower().startswith("mailto:") else None
        raise Suggested(
            "an email address as RFC 5322 writes one, local-part@domain with no mailto: "
            "scheme, display name or quotes (e.g. oncall@example.com), or an HTTPS URL: "
            + str(exc).rstrip("."),
            bare if bare is not None and _is_address(bare) else None,
        ) from None
    return value


def _is_address(text: str) -> bool:
    try:
        validate_email(text, check_deliverability=False)
    except EmailNotValidError:
        return False
    return True


def same_target(value: str) -> str:
    """Two entries SNS delivers to alike: an address's domain and a URL's scheme and host in
    any case (RFC 5321 and RFC 3986 make them case-insensitive)."""
    if value.startswith(HTTPS):
        parts = urlsplit(value)
        return parts._replace(scheme=parts.scheme.lower(), netloc=parts.netloc.lower()).geturl()
    local, _, domain = value.rpartition("@")
    return f"{local}@{domain.lower()}"


AlertTarget = Annotated[
    str, matching(ALERT_TARGET_PATTERN), AfterValidator(_alert_target), SameAs(same_target)
]


class ObservabilityConfig(SettingsModel):
    enabled: bool = Field(
        True,
        description="Install Amazon Managed Prometheus/Grafana and the HyperPod observability "
        "add-on.",
    )
    alert_subscriptions: Annotated[
        list[AlertTarget],
        Once(
            "each is one SNS subscription of the alerts topic: SNS answers a second subscribe "
            "of the same endpoint with the first one, so removing either entry later "
            "unsubscribes both"
        ),
    ] = Field(
        default_factory=list,
        description="Who the SLO alerts reach: email addresses (SNS mails a link to confirm) and "
        "HTTPS URLs, each an SNS subscription of the alerts topic (the stack output "
        "alertsTopicArn), which the Prometheus workspace's alert manager sends to.",
        examples=[["oncall@example.com"]],
    )
