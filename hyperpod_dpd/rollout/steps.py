"""One step of a rollout: from the weights the stack holds and the canary's verdict, the weights
it moves to (the split's maths: specs/traffic_steps.py), the config keys that change, and how a
step is named in Pulumi's update message, from which a later run recognizes it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from core.vocabulary import PROJECT
from specs.traffic_steps import next_weight, reweighted

TRAFFIC_KEY = f"{PROJECT}:traffic"
# Pulumi's update message of a step: `<MESSAGE_PREFIX> <stack>: <verdict> <candidate> <b>% ->
# <a>%; weights k=v,... (was k=v,...)`.
MESSAGE_PREFIX = "hyperpod-dpd rollout"
_MESSAGE = re.compile(
    rf"^{MESSAGE_PREFIX} (?P<stack>\S+): (?P<verdict>promote|rollback) (?P<candidate>\S+) "
    r"\d+% -> \d+%; weights (?P<after>\S+) \(was (?P<before>\S+)\)"
)


@dataclass(frozen=True)
class Step:
    verdict: str  # promote | rollback
    candidate: str
    before: dict[str, int]
    after: dict[str, int]

    @property
    def changed(self) -> dict[str, int]:
        """The config keys (`pulumi config set --path` paths) the step sets, and their values."""
        return {
            f"{TRAFFIC_KEY}.{key}": weight
            for key, weight in sorted(self.after.items())
            if self.before.get(key) != weight
        }

    @property
    def restored(self) -> dict[str, int]:
        """The same keys at their values before the step (to undo a write)."""
        return {f"{TRAFFIC_KEY}.{key}": self.before[key] for key in self.after
                if self.before.get(key) != self.after[key]}  # fmt: skip

    @property
    def moves(self) -> str:
        c = self.candidate
        return f"{c} {self.before[c]}% -> {self.after[c]}%"

    def message(self, stack: str) -> str:
        """Pulumi's update message for this step."""
        return (
            f"{MESSAGE_PREFIX} {stack}: {self.verdict} {self.moves}; weights "
            f"{weights_text(self.after)} (was {weights_text(self.before)})"
        )


def weights_text(weights: Mapping[str, int]) -> str:
    return ",".join(f"{key}={weights[key]}" for key in sorted(weights))


def _weights(text: str) -> dict[str, int] | None:
    try:
        return {k: int(v) for k, v in (pair.split("=", 1) for pair in text.split(","))}
    except ValueError:
        return None


def step_of_message(message: str) -> Step | None:
    """The step an update's message names (None: not a rollout's)."""
    m = _MESSAGE.match(message or "")
    if not m:
        return None
    before, after = _weights(m["before"]), _weights(m["after"])
    if before is None or after is None or m["candidate"] not in after:
        return None
    return Step(m["verdict"], m["candidate"], before, after)


def step_for(
    verdict: str, traffic: Mapping[str, int], candidate: str, steps: tuple[int, ...]
) -> Step | None:
    """The step a verdict takes (None: it takes none: hold, or nothing left to shift)."""
    if verdict == "rollback":
        weight: int | None = 0
    elif verdict == "promote":
        weight = next_weight(traffic[candidate], steps)
    else:
        weight = None
    if weight is None or weight == traffic[candidate]:
        return None
    return Step(verdict, candidate, dict(traffic), reweighted(traffic, candidate, weight))
