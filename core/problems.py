"""Every refusal of bad input, one type and one renderer: where the input was given (a stack's
config key such as `hyperpod-dpd:endpoint.tensorParallelSize`, or a command's flag such as
`--tp`), the value received, what is allowed, and how to fix it. The stack's settings, the sizing
maths, the commands' flags and the benchmark's workload all refuse with these, so every refusal
reads the same and the fix-hint audit (tests/test_fix_hints.py) covers the settings' ones.

`ConfigError` carries one or more problems out to the command line (a UsageProblem: exit 2),
which prints its message: a header naming what was judged, then each problem.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from core.exits import UsageProblem


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()  # the value of a problem whose input was not given at all


@dataclass(frozen=True)
class ConfigProblem:
    key: str  # where it was given: "hyperpod-dpd:endpoint.routingStrategy", "--tp"
    value: Any  # what was received; MISSING when absent
    allowed: str
    fix: str

    def sentence(self) -> str:
        """The problem without its key, for where the key is said already (argparse's
        `argument --tp: ...`)."""
        got = "not set" if self.value is MISSING else f"got {show(self.value)}"
        return f"{got}; allowed: {self.allowed}. Fix: {self.fix}"

    def render(self) -> str:
        got = "not set" if self.value is MISSING else f"got {show(self.value)}"
        return f"{self.key}: {got}; allowed: {self.allowed}.\n    Fix: {self.fix}"


class ConfigError(UsageProblem):
    """Bad input: every problem at once. The program raises it as a RunError
    (program/stack_config.py), so `pulumi up` prints the message without a traceback; a command
    prints it as `error: <message>` and exits 2."""

    def __init__(self, problems: list[ConfigProblem], source: str = "stack configuration"):
        self.problems, self.source = problems, source
        lines = [f"Invalid {source} ({len(problems)} problem{'s' * (len(problems) != 1)}):"]
        lines += [f"  - {p.render()}" for p in problems]
        super().__init__("\n".join(lines))


def show(value: Any) -> str:
    """A value as a message quotes it: JSON, a string in quotes, cut at 80 characters."""
    text = json.dumps(value, default=str) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
