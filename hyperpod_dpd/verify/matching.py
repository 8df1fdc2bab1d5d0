"""Which log lines belong to the prompts `verify` sent: the router's routing decision and the
decoder's KV retrievals carry a token count, matched against the prompt's estimate."""

from __future__ import annotations

from hyperpod_dpd.verify import logs
from hyperpod_dpd.verify.prompts import Prompt

MATCH_RATIO = 3.0  # a log line belongs to a prompt if its token count is within 3x of ours


def _near(tokens: int, expected: int) -> float:
    """How far a logged token count is from ours, as a ratio >= 1."""
    a, b = max(tokens, 1), max(expected, 1)
    return max(a, b) / min(a, b)


def match_decision(
    decisions: list[logs.RoutingDecision], prompt: Prompt
) -> logs.RoutingDecision | None:
    """The router's decision for this prompt: the line whose estimate is nearest ours."""
    near = [
        d for d in decisions if _near(d.estimated_tokens, prompt.estimated_tokens) <= MATCH_RATIO
    ]
    if not near:
        return None
    best = min(_near(d.estimated_tokens, prompt.estimated_tokens) for d in near)
    return [d for d in near if _near(d.estimated_tokens, prompt.estimated_tokens) == best][-1]


def long_prompt_retrievals(text: str, prompt: Prompt) -> list[logs.KvRetrieval]:
    """The decoder's lines for the long prompt (one per TP rank): required tokens near the prompt's
    size, of the latest request when the lines carry request ids."""
    near = [
        r
        for r in logs.retrievals(text)
        if _near(r.required, prompt.estimated_tokens) <= MATCH_RATIO
    ]
    ids = [r.req_id for r in near if r.req_id]
    if ids:
        return [r for r in near if r.req_id == ids[-1]]
    return near
