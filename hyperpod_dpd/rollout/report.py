"""What a rollout says of each decision: one line of text, or one JSON document (a line of its
own, for a pipeline to read as it comes), keys in camelCase and numbers rounded.

Decisions and their exit codes (the canary's: core/exits.py):
  promote     0  the candidate moved to the next step (or, with --dry-run, would)
  done        0  the candidate takes all the traffic: nothing left to shift
  hold        4  too few requests, or the weights have not served a whole window yet
  rollback    1  the candidate went back to 0
  rolledBack  1  the candidate is at 0 already: a rollout does not bring it back
  stopped     1  a check stopped the step (the stack's deployed weights differ from the file's,
                 something besides the routing would change, a Pulumi command failed)
  resume      -  the step an earlier run was killed in, finished (exit: its verdict's)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime

from core.exits import EXIT_FAILED, EXIT_HOLD, EXIT_OK
from hyperpod_dpd.canary.command import Assessment
from hyperpod_dpd.canary.verdict import Measures

EXITS = {
    "promote": EXIT_OK,
    "done": EXIT_OK,
    "hold": EXIT_HOLD,
    "rollback": EXIT_FAILED,
    "rolledBack": EXIT_FAILED,
    "stopped": EXIT_FAILED,
}
# Decisions after which a loop does not judge again.
FINAL = ("done", "rollback", "rolledBack", "stopped")


def update_name(stack: str, version: object) -> str:
    """A Pulumi update as the rollout names it: its version and the stack it ran on (`pulumi
    stack history --stack STACK` lists it), never a bare "pulumi update N" that reads as a
    command acting on whichever stack is selected."""
    return f"update {version} of stack {stack}"


@dataclass
class Decision:
    decision: str
    stack: str
    candidate: str
    weights: dict[str, int]  # before the decision
    reasons: list[str]
    after: dict[str, int] | None = None  # the step's weights
    verdict: str | None = None  # the canary's
    assessment: Assessment | None = None
    dry_run: bool = False
    applied: bool = False
    update: int | None = None  # Pulumi's update version
    commit: str | None = None
    calls: list[str] = field(default_factory=list)  # what it ran (or, dry, would run)
    next: str | None = None
    at: datetime = field(default_factory=lambda: datetime.now(UTC))

    @property
    def exit_code(self) -> int:
        if self.decision == "resume":
            return EXITS.get(self.verdict or "", EXIT_OK)
        return EXITS[self.decision]

    @property
    def final(self) -> bool:
        if self.decision == "resume":
            return self.verdict == "rollback" or (self.after or {}).get(self.candidate) == 100
        if self.decision == "promote" and (self.after or {}).get(self.candidate) == 100:
            return True
        return self.decision in FINAL

    def to_json(self) -> dict:
        a = self.assessment
        return {
            "at": self.at.isoformat(timespec="seconds"),
            "stack": self.stack,
            "candidate": self.candidate,
            "decision": self.decision,
            "verdict": self.verdict,
            "reasons": self.reasons,
            "weights": {"before": self.weights, "after": self.after},
            "window": a.window if a else None,
            "baselines": a.baselines if a else None,
            "measures": None
            if a is None
            else {"candidate": measures_json(a.mine), "baseline": measures_json(a.theirs)},
            "dryRun": self.dry_run,
            "applied": self.applied,
            "update": self.update,
            "commit": self.commit,
            "calls": self.calls,
            "next": self.next,
        }

    def line(self) -> str:
        """The decision in one line of text."""
        c = self.candidate
        if self.after is not None:
            moved = f"{c} {self.weights[c]}% -> {self.after[c]}%"
        else:
            moved = f"{c} at {self.weights.get(c, 0)}%"
        done = []
        if self.dry_run:
            done.append("dry run: nothing changed")
        if self.update is not None:
            done.append(update_name(self.stack, self.update))
        if self.commit:
            done.append(f"commit {self.commit[:12]}")
        line = f"{self.at:%H:%M:%S} {self.stack} {self.decision}: {moved}"
        if done:
            line += f" ({', '.join(done)})"
        if self.reasons:
            line += ": " + "; ".join(self.reasons)
        return line + (f"; next: {self.next}" if self.next else "")

    def text(self) -> str:
        """The line, and under a dry run the calls it would make."""
        return "\n".join([self.line(), *(f"  would run: {c}" for c in self.calls if self.dry_run)])

    def render(self, fmt: str) -> str:
        return json.dumps(self.to_json(), sort_keys=False) if fmt == "json" else self.text()


def measures_json(m: Measures) -> dict:
    def r(x: float | None, digits: int) -> float | None:
        return None if x is None else round(x, digits)

    return {
        "requests": m.requests,
        "errors": m.errors,
        "errorRate": r(m.error_rate, 4),
        "ttftP50Ms": r(m.ttft_p50_ms, 1),
        "ttftP99Ms": r(m.ttft_p99_ms, 1),
        "itlP50Ms": r(m.itl_p50_ms, 1),
        "itlP99Ms": r(m.itl_p99_ms, 1),
        "outputTokensPerSecondPerGpu": r(m.tokens_per_s_per_gpu, 2),
        "usdPerMillionOutputTokens": r(m.usd_per_million_output_tokens, 2),
    }
