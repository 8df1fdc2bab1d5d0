"""The traffic split's front door, judged from outside it: a request without the stack's API key
is refused with 401 and one with it is answered (specs/traffic/__init__.py: the listener's rule
forwards only requests that carry a key). Pure judges of the two answers; door_checks.py sends them."""

from __future__ import annotations

from typing import Any

from hyperpod_dpd.verify import causes
from hyperpod_dpd.verify.prompts import PromptResult
from hyperpod_dpd.verify.results import Check

SPLIT_REFUSES = "split refuses no key"
SPLIT_ANSWERS = "split answers the key"
SPLIT_CHECKS = (SPLIT_REFUSES, SPLIT_ANSWERS)


def judge_refusal(result: PromptResult, context: dict[str, Any]) -> Check:
    """A prompt with no Authorization header: 401 is the front door closed."""
    if result.status == 401:
        return Check.ok(SPLIT_REFUSES, "401 without Authorization")
    if result.ok:
        detail = f"answered without a key: {result.summary}"
        return Check.failed(SPLIT_REFUSES, detail, causes.SPLIT_OPEN, **context)
    return Check.failed(SPLIT_REFUSES, result.summary, causes.SPLIT_UNREACHED, **context)


def judge_answer(result: PromptResult, context: dict[str, Any]) -> Check:
    """The same prompt with `Authorization: Bearer <the stack's key>`: answered."""
    if result.ok:
        return Check.ok(SPLIT_ANSWERS, f"answered: {result.summary}")
    cause = causes.SPLIT_KEY_REFUSED if result.status == 401 else causes.SPLIT_UNREACHED
    return Check.failed(SPLIT_ANSWERS, result.summary, cause, **context)
