"""hyperpod-dpd-operator-version: pdSpec needs the inference operator 3.2 or newer; older
operators crash DPD pods with EngineDeadError (AWS DPD troubleshooting, "Pod startup issues";
DPD arrived with 3.2 in aws/sagemaker-hyperpod-cli PR #427)."""

from __future__ import annotations

from policies.rules import views
from policies.rules.base import Finding, Rule

MINIMUM = (3, 2)


def parse_version(text: str) -> tuple[int, ...] | None:
    try:
        return tuple(int(p) for p in text.lstrip("v").split("."))
    except ValueError:
        return None


def check(resources, limits):
    for iec in views.endpoints(resources):
        if views.pd_spec(iec) is None:
            continue
        text = views.annotation(iec, "operator-version")
        version = parse_version(text) if text else None
        if version is None:
            yield Finding(
                iec.urn,
                "the endpoint does not say which inference operator version serves it; DPD "
                "needs 3.2 or newer: deploy it with this stack (hyperpod-dpd:inferenceOperator)",
            )
        elif version < MINIMUM:
            yield Finding(
                iec.urn,
                f"inference operator {text} does not support pdSpec (needs 3.2 or newer); set "
                "hyperpod-dpd:inferenceOperator.version to 3.3 (add-on v1.4.0-eksbuild.1) or "
                f"{views.endpoint_key(iec, 'mode')} to colocated",
            )


RULE = Rule("hyperpod-dpd-operator-version", "DPD needs operator >= 3.2", "mandatory", check)
