"""The prompts `verify()` sends (runner.py): a short and a long prompt to the router, then what
the router logged for them (which worker it chose) and what the decoder logged for the long one
(the KV cache it received). Sent only when the endpoint, its pods and the router's Service
passed: a prompt would just time out."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from hyperpod_dpd.shared.kube import ROUTER_NAMESPACE, ClusterError
from hyperpod_dpd.verify import causes, logs
from hyperpod_dpd.verify.endpoint import pod_name
from hyperpod_dpd.verify.kv_transfer import (
    KV_RECEIVED,
    KV_SPEED,
    PD_BUFFER,
    judge_buffer,
    judge_kv,
    kv_diagnostics,
)
from hyperpod_dpd.verify.matching import long_prompt_retrievals, match_decision
from hyperpod_dpd.verify.prompts import Prompt, PromptResult, long_prompt, short_prompt
from hyperpod_dpd.verify.results import FAIL, Check
from hyperpod_dpd.verify.routing import (
    LONG_ANSWERED,
    LONG_ROUTED,
    SHORT_ANSWERED,
    SHORT_ROUTED,
    judge_prompt,
    judge_routing,
)
from hyperpod_dpd.verify.run_state import Options, RunState

LOG_SLACK_SECONDS = 5

PROMPT_CHECKS = (
    SHORT_ANSWERED,
    LONG_ANSWERED,
    SHORT_ROUTED,
    LONG_ROUTED,
    KV_RECEIVED,
    KV_SPEED,
    PD_BUFFER,
)
# Prompts are only worth sending when these passed (a prompt would just time out).
ROUTER_SERVICE_CHECK = "router service"
PROMPT_BLOCKERS = (
    "endpoint ready",
    "endpoint is DPD",
    "prefill pods",
    "decode pods",
    "router pod",
    ROUTER_SERVICE_CHECK,
)


def prompts(run: RunState) -> None:
    """Short and long prompt, then what the router and the decoder logged for them."""
    if not run.options.send_prompts or run.client is None:
        run.add(*(Check.skipped(n, "prompts not sent (--no-prompts)") for n in PROMPT_CHECKS))
        return
    failed = [c.name for c in run.report.checks if c.result == FAIL]
    if blockers := [n for n in PROMPT_BLOCKERS if n in failed]:
        why = f"not sent: {', '.join(blockers)} failed"
        run.add(*(Check.skipped(n, why) for n in PROMPT_CHECKS))
        return
    model = run.options.model or run.facts.model
    router_running = run.running("router")
    ctx = {
        **run.base,
        "router_pod": pod_name(router_running[0]) if router_running else "?",
        "url": getattr(run.client, "url", "?"),
        "timeout": float(getattr(run.client, "timeout", 0)),
        "threshold": run.threshold,
        "max_model_len": run.facts.max_model_len,
    }
    started = time.monotonic()

    def since() -> int:
        return math.ceil(time.monotonic() - started) + LOG_SLACK_SECONDS

    short = short_prompt(model)
    short_result = run.client.send(short)
    run.add(judge_prompt(SHORT_ANSWERED, short_result, ctx))
    long = long_prompt(run.threshold, model, run.facts.max_model_len)
    long_result: PromptResult | None = None
    if long is None:
        detail = f"threshold {run.threshold}, max-model-len {run.facts.max_model_len}"
        run.add(Check.failed(LONG_ANSWERED, detail, causes.PROMPT_TOO_LONG, **ctx))
    else:
        long_result = run.client.send(long)
        run.add(judge_prompt(LONG_ANSWERED, long_result, ctx))

    answered = [
        (prompt, name)
        for prompt, result, name in (
            (short, short_result, SHORT_ROUTED),
            (long, long_result, LONG_ROUTED),
        )
        if prompt is not None and result is not None and result.ok
    ]
    _routing(run, answered, router_running, since, ctx)
    if long is None or long_result is None or not long_result.ok:
        run.add(
            *(
                Check.skipped(n, "the long prompt was not answered")
                for n in (KV_RECEIVED, KV_SPEED, PD_BUFFER)
            )
        )
        return
    _kv_transfer(run, long, since)


def _routing(
    run: RunState,
    answered: list[tuple[Prompt, str]],
    router_running: list[dict[str, Any]],
    since: Callable[[], int],
    ctx: dict[str, Any],
) -> None:
    checks = {
        n: Check.skipped(n, f"the {n.split()[0]} prompt was not answered")
        for n in (SHORT_ROUTED, LONG_ROUTED)
    }
    if answered and not router_running:
        checks.update({n: Check.skipped(n, "no running router pod") for _, n in answered})
    elif answered:
        try:
            text = _read_until(
                lambda: run.log(ROUTER_NAMESPACE, router_running, "router-container", since()),
                lambda t: all(match_decision(logs.routing_decisions(t), p) for p, _ in answered),
                run.options,
            )
            checks.update({n: judge_routing(n, p, text, run.threshold, ctx) for p, n in answered})
        except ClusterError as exc:
            checks.update(
                {n: Check.failed(n, str(exc), causes.API_ERROR, **run.base) for _, n in answered}
            )
    run.add(*checks.values())


def _kv_transfer(run: RunState, long: Prompt, since: Callable[[], int]) -> None:
    decoder = run.target.container("decode")
    running = run.running("decode")
    ctx = {**run.base, "container": decoder, "pod": pod_name(running[0]) if running else "?"}
    try:
        text = _read_until(
            lambda: run.log(run.target.namespace, running, decoder, since()),
            lambda t: bool(long_prompt_retrievals(t, long)),
            run.options,
        )
    except ClusterError as exc:
        names = (KV_RECEIVED, KV_SPEED, PD_BUFFER)
        run.add(*(Check.failed(n, str(exc), causes.API_ERROR, **ctx) for n in names))
        return
    diagnostics = kv_diagnostics(run.pods, run.target)
    run.add(*judge_kv(long_prompt_retrievals(text, long), ctx, diagnostics))
    run.add(judge_buffer(text, ctx))


def _read_until(read: Callable[[], str], done: Callable[[str], bool], options: Options) -> str:
    """Read a log up to `log_attempts` times until `done` holds; the last text either way."""
    text = ""
    for attempt in range(max(1, options.log_attempts)):
        text = read()
        if done(text):
            break
        if attempt + 1 < options.log_attempts:
            time.sleep(options.poll_interval)
    return text
