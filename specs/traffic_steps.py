"""How a canary moves through `hyperpod-dpd:traffic`: the weight steps (5 -> 25 -> 50 -> 100) and
the `pulumi config set` lines that take the next one or roll back. Moving a weight changes the
split's listener only (specs/traffic/__init__.py), so each step is one `pulumi up` away.

The baseline of a split is its heaviest endpoint (the first by key on a tie): the one serving
most users, which a candidate is compared with and whose weight a step takes from."""

from __future__ import annotations

import shlex
from collections.abc import Mapping

from core.vocabulary import PROJECT

STEPS = (5, 25, 50, 100)


def baseline_of(traffic: Mapping[str, int]) -> str:
    return min(traffic, key=lambda k: (-traffic[k], k))


def candidates_of(traffic: Mapping[str, int]) -> list[str]:
    baseline = baseline_of(traffic)
    return sorted(k for k in traffic if k != baseline)


def next_weight(current: int, steps: tuple[int, ...] = STEPS) -> int | None:
    """The next of `steps` after `current` percent (None: the candidate already takes
    everything)."""
    return next((step for step in steps if step > current), None)


def reweighted(traffic: Mapping[str, int], candidate: str, weight: int) -> dict[str, int]:
    """`traffic` with `candidate` at `weight`, the difference taken from (or given back to) the
    others, heaviest first, so the split still sums to 100."""
    out = dict(traffic)
    delta = weight - out[candidate]
    out[candidate] = weight
    for key in sorted((k for k in out if k != candidate), key=lambda k: (-out[k], k)):
        take = min(delta, out[key]) if delta > 0 else delta
        out[key] -= take
        delta -= take
        if delta == 0:
            break
    return out


def set_commands(before: Mapping[str, int], after: Mapping[str, int], stack: str) -> str:
    """The `pulumi config set` lines from `before` to `after`, then `pulumi up`, each naming
    `stack` (without it they act on whichever stack is selected)."""
    named = f"--stack {shlex.quote(stack)}"
    lines = [
        f"pulumi config set {named} --path '{PROJECT}:traffic.{key}' {after[key]}"
        for key in sorted(after)
        if after[key] != before.get(key)
    ]
    return " && ".join([*lines, f"pulumi up {named}"])


def rollback_command(traffic: Mapping[str, int], candidate: str, stack: str) -> str:
    return set_commands(traffic, reweighted(traffic, candidate, 0), stack)


def promote_command(traffic: Mapping[str, int], candidate: str, stack: str) -> str | None:
    """The next step's command (None: nothing left to shift)."""
    weight = next_weight(traffic[candidate])
    if weight is None:
        return None
    return set_commands(traffic, reweighted(traffic, candidate, weight), stack)
