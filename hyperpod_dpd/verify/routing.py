"""Judging the prompts: each answered, and routed by the threshold (the short one to the decoder
only, the long one to prefill + decode), from the router's 'Conditional routing' lines."""

from __future__ import annotations

from typing import Any

from hyperpod_dpd.verify import causes, logs
from hyperpod_dpd.verify.matching import match_decision
from hyperpod_dpd.verify.prompts import Prompt, PromptResult
from hyperpod_dpd.verify.results import Check

SHORT_ANSWERED, LONG_ANSWERED = "short prompt answered", "long prompt answered"
SHORT_ROUTED, LONG_ROUTED = "short prompt -> decoder only", "long prompt -> prefill + decode"


def judge_prompt(name: str, result: PromptResult, context: dict[str, Any]) -> Check:
    if result.ok:
        return Check.ok(name, f"HTTP {result.status}: {result.summary}")
    cause = causes.PROMPT_TIMEOUT if result.timed_out else causes.PROMPT_FAILED
    return Check.failed(name, result.summary, cause, **context)


def judge_routing(
    name: str,
    prompt: Prompt,
    router_log: str,
    threshold: int,
    context: dict[str, Any],
) -> Check:
    disaggregate = prompt.kind == "long"
    decisions = logs.routing_decisions(router_log)
    decision = match_decision(decisions, prompt)
    if decision is None:
        detail = (
            f"no 'Conditional routing' line near estimated_tokens={prompt.estimated_tokens} "
            f"({len(decisions)} such lines since the prompts)"
        )
        return Check.failed(name, detail, causes.NO_ROUTING_LINE, **context)
    detail = (
        f"estimated_tokens={decision.estimated_tokens}, threshold={decision.threshold}, "
        f"disaggregate={decision.disaggregate}"
    )
    if decision.threshold != threshold:
        detail += f" (expected threshold {threshold})"
    if decision.disaggregate == disaggregate:
        if disaggregate and (selections := logs.prefill_selections(router_log)):
            s = selections[-1]
            detail += f"; {s.router} selected {s.url}"
        return Check.ok(name, detail)
    cause = causes.LONG_NOT_DISAGGREGATED if disaggregate else causes.SHORT_DISAGGREGATED
    return Check.failed(name, detail, cause, **context, router_threshold=decision.threshold)
