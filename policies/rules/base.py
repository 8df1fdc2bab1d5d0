"""What a policy rule is: a pure function of the resources the engine sees.

Rules take plain data (type, name, URN and the camelCase input props, exactly what a mock
records and what CrossGuard passes to a policy), so the same rule runs in the components, in
the offline plan and in the CrossGuard pack.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Enforcement = Literal["mandatory", "advisory"]


@dataclass(frozen=True)
class ResourceView:
    type: str
    name: str
    urn: str
    props: Mapping[str, Any]


@dataclass(frozen=True)
class Finding:
    urn: str
    message: str


@dataclass(frozen=True)
class Rule:
    name: str  # kebab-case, e.g. "hyperpod-dpd-instance-type"
    description: str
    enforcement: Enforcement
    check: Callable[[Sequence[ResourceView]], Iterable[Finding]]


@dataclass(frozen=True)
class Violation:
    policy: str
    enforcement: Enforcement
    urn: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {
            "policy": self.policy,
            "enforcement": self.enforcement,
            "urn": self.urn,
            "message": self.message,
        }
