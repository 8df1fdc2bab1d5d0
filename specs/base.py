"""A desired resource: what the program will register, as the engine will receive it.

`props` are the engine's (camelCase) inputs, plain data, with `${name.attr}` placeholders
(core/refs.py) where another resource's output goes. The policy gate judges these before
anything exists; the components register exactly these props with the placeholders resolved,
so what was judged is what is deployed (tests/test_gate.py compares the two).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from core.refs import ref
from core.vllm.worker_facts import WorkerFacts
from core.vocabulary import urn

_UPPER = re.compile(r"(?<!^)(?=[A-Z])")


@dataclass(frozen=True)
class Desired:
    type: str  # the engine's type token, e.g. aws:ec2/subnet:Subnet
    name: str  # the logical name: f"{component name}-{suffix}"
    parents: tuple[str, ...]  # component type tokens, outermost first (they make the URN)
    props: Mapping[str, Any] = field(default_factory=dict)
    # The input the engine fills in when the program gives none (Pulumi's auto-naming, done in
    # the provider's Check during preview): the gate sees it as a placeholder.
    autoname: str | None = None
    # An endpoint's numbers, typed (core/vllm/worker_facts.py): what the gate's rules read instead of
    # parsing the manifest's text back.
    facts: WorkerFacts | None = None

    def urn(self, stack: str, project: str) -> str:
        return urn(stack, project, (*self.parents, self.type), self.name)

    def view_props(self) -> dict[str, Any]:
        """The props as the engine (and so a policy) sees them after auto-naming."""
        props = dict(self.props)
        if self.autoname and props.get(self.autoname) is None:
            props[self.autoname] = ref(self.name, self.autoname)
        return props

    def kwargs(self) -> dict[str, Any]:
        """The props as the Python SDK's keyword arguments: top-level names in snake_case;
        nested keys stay as the engine names them (the SDK passes camelCase keys through)."""
        return {_UPPER.sub("_", k).lower(): v for k, v in self.props.items()}
