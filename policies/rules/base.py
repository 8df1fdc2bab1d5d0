"""What a policy rule is: a pure function of the resources the engine sees.

Rules take plain data (type, name, URN and the camelCase input props, exactly what a mock
records and what CrossGuard passes to a policy), so the same rule runs in the policy gate (on the
desired state, before anything is registered), in the offline plan and in the CrossGuard pack.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from core.vllm.worker_facts import WorkerFacts

Enforcement = Literal["mandatory", "advisory"]


@dataclass(frozen=True)
class ResourceView:
    type: str
    name: str
    urn: str
    props: Mapping[str, Any]
    # An endpoint's numbers, typed, where the desired state has them (the gate); None where
    # only the deployed props are known (the CrossGuard pack): views.py reads them from props.
    facts: WorkerFacts | None = None


@dataclass(frozen=True)
class Finding:
    urn: str
    message: str
    # A rule may lower its own level for one finding (e.g. advisory when the user gave no
    # expected load and the documents' defaults were assumed).
    enforcement: Enforcement | None = None
    # Not a violation: what the rule could not judge because a value it needs is unknown until
    # a resource exists (a first `pulumi preview`). The pack reports these in one advisory
    # policy; the gate never meets them (its placeholders are known identities).
    unchecked: bool = False


@dataclass(frozen=True)
class Limits:
    """Tunable limits (the CrossGuard pack's config schema; defaults from the documents)."""

    min_routing_threshold: int = 256  # one LMCache chunk: shorter prompts can hang the decoder
    overhead_gib: float = 2.0  # per GPU outside vLLM's share (CUDA context, NCCL/NIXL buffers)
    min_dense_params_billion: float = 70.0  # DPD pays off for dense 70B+ models
    extra_dpd_images: tuple[str, ...] = ()  # images trusted as DPD-capable besides the two


@dataclass(frozen=True)
class Rule:
    name: str  # kebab-case, e.g. "hyperpod-dpd-instance-type"
    description: str
    enforcement: Enforcement
    check: Callable[[Sequence[ResourceView], Limits], Iterable[Finding]]
    # True when some findings are only advisory (the pack then adds a companion advisory
    # policy, since a CrossGuard policy has one enforcement level).
    advisory_findings: bool = False
    # True for a rule no stack may lower (core/vocabulary.py LOCKED_RULE_NAMES): mandatory on
    # every stack, whatever its hyperpod-dpd:policy says (the settings refuse an override).
    locked: bool = False


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
