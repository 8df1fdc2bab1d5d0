"""Whether a Kubernetes label selector (matchLabels, matchExpressions) selects a set of labels:
the API's LabelSelector semantics (k8s.io/apimachinery/pkg/apis/meta/v1 LabelSelector, "The
requirements are ANDed"; operators In, NotIn, Exists, DoesNotExist;
https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#resources-that-support-set-based-requirements).
An empty selector selects everything."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def selects(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    return all(_holds(e, labels) for e in selector.get("matchExpressions") or [])


def _holds(requirement: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key, values = requirement["key"], requirement.get("values") or []
    present = key in labels
    match requirement["operator"]:
        case "In":
            return present and labels[key] in values
        case "NotIn":
            return not present or labels[key] not in values
        case "Exists":
            return present
        case "DoesNotExist":
            return not present
    raise ValueError(f"not a label selector operator: {requirement['operator']!r}")
