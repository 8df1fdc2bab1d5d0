"""The checks of dpd-facts.md "Verifying a deployment", automated.

Pure functions judge the API server's JSON and log text (`judge_*`); `verify()` fetches them in the
documented order (endpoint, pods, router, roles, prompts, router decisions, KV transfer) and never
lets one failed request stop the rest: a check that cannot run is reported, not raised.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.vllm_args import flag_value, merge_args
from hyperpod_dpd.verify import causes, logs
from hyperpod_dpd.verify.causes import Cause
from hyperpod_dpd.verify.cluster import ROUTER_NAMESPACE, Cluster, ClusterError
from hyperpod_dpd.verify.prompts import (
    Prompt,
    PromptClient,
    PromptResult,
    long_prompt,
    short_prompt,
)

PASS, FAIL, SKIP = "pass", "FAIL", "skip"
READY_MESSAGE = "DPD prefill and decode deployments are ready"
ROLE_LABEL = "inference.sagemaker.aws.amazon.com/dpd-role"
EXPECTED_ROLE = {"prefill": "sender", "decode": "receiver"}
DEFAULT_THRESHOLD = 4096
DEFAULT_MODEL = "/opt/ml/model"
MIN_THROUGHPUT_GBPS = 1.0  # below: TCP, not EFA (field-problems #13)
MATCH_RATIO = 3.0  # a log line belongs to a prompt if its token count is within 3x of ours
LOG_SLACK_SECONDS = 5

SHORT_ANSWERED, LONG_ANSWERED = "short prompt answered", "long prompt answered"
SHORT_ROUTED, LONG_ROUTED = "short prompt -> decoder only", "long prompt -> prefill + decode"
KV_RECEIVED, KV_SPEED, PD_BUFFER = (
    "KV cache received",
    "KV transfer throughput",
    "decoder PD buffer",
)
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
PROMPT_BLOCKERS = ("endpoint ready", "endpoint is DPD", "prefill pods", "decode pods", "router pod")


@dataclass(frozen=True)
class Check:
    name: str
    result: str  # pass | FAIL | skip
    detail: str
    cause: str = ""
    fix: str = ""
    ref: str = ""

    @classmethod
    def ok(cls, name: str, detail: str) -> Check:
        return cls(name, PASS, detail)

    @classmethod
    def skipped(cls, name: str, detail: str) -> Check:
        return cls(name, SKIP, detail)

    @classmethod
    def failed(cls, check: str, detail: str, cause: Cause, /, **context: Any) -> Check:
        """A failed check; `context` fills the cause's placeholders ({name}, {pod}, ...)."""
        c = cause.format(**context)
        return cls(check, FAIL, detail, c.cause, c.fix, c.ref)


@dataclass(frozen=True)
class Target:
    name: str
    namespace: str
    routing_threshold: int | None = None  # explicit: wins over the IEC's value
    fallback_threshold: int | None = None  # the stack's value, if the IEC has none

    @property
    def router_prefix(self) -> str:
        return f"{self.name}-{self.namespace}-router-"

    def container(self, role: str) -> str:
        return f"{role}-{self.name}"


@dataclass(frozen=True)
class Options:
    send_prompts: bool = True
    model: str | None = None  # default: the IEC's --served-model-name or --model
    log_bytes: int = 8 * 1024 * 1024
    log_attempts: int = 3  # router/decoder lines may trail the answer by a moment
    poll_interval: float = 2.0


@dataclass
class Report:
    target: Target
    threshold: int
    threshold_source: str
    prompts_via: str
    checks: list[Check] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return 1 if any(c.result == FAIL for c in self.checks) else 0

    def count(self, result: str) -> int:
        return sum(c.result == result for c in self.checks)


class EndpointNotFound(Exception):
    """The InferenceEndpointConfig does not exist (bad input: exit 2)."""


# Facts read from the InferenceEndpointConfig -----------------------------------------------------


@dataclass(frozen=True)
class EndpointFacts:
    is_dpd: bool
    threshold: int | None
    model: str
    max_model_len: int | None


def endpoint_facts(iec: dict[str, Any]) -> EndpointFacts:
    spec = iec.get("spec") or {}
    pd = spec.get("pdSpec")
    worker = spec.get("worker") or {}
    args = [str(a) for a in worker.get("args") or []]
    decode_args = [str(a) for a in ((pd or {}).get("decodingSpec") or {}).get("args") or []]
    try:  # role args replace worker args, the operator's rule (core/vllm_args.py)
        merged = merge_args(args, decode_args)
        model = flag_value(merged, "--served-model-name") or flag_value(merged, "--model")
        max_len = flag_value(merged, "--max-model-len")
    except ValueError:  # args this project did not write: judge what can be judged
        model, max_len = None, None
    model = model or DEFAULT_MODEL
    threshold = (pd or {}).get("routingThreshold")
    return EndpointFacts(
        is_dpd=pd is not None,
        threshold=int(threshold) if threshold is not None else None,
        model=model,
        max_model_len=int(max_len) if max_len and max_len.isdigit() else None,
    )


def judge_iec(iec: dict[str, Any], target: Target) -> list[Check]:
    status = iec.get("status") or {}
    conditions = status.get("conditions") or []
    first = conditions[0] if conditions else {}
    message = str(first.get("message") or "")
    ctx = {"name": target.name, "namespace": target.namespace}
    if message == READY_MESSAGE:
        ready = Check.ok("endpoint ready", message)
    else:
        state = status.get("state") or "no state"
        shown = f"'{message}'" if message else "no condition"
        ready = Check.failed(
            "endpoint ready", f"status {state}, conditions[0]: {shown}", causes.IEC_NOT_READY, **ctx
        )
    if (iec.get("spec") or {}).get("pdSpec") is not None:
        dpd = Check.ok("endpoint is DPD", "spec.pdSpec present")
    else:
        dpd = Check.failed("endpoint is DPD", "no spec.pdSpec", causes.NOT_DPD, **ctx)
    return [ready, dpd]


# Pods ---------------------------------------------------------------------------------------------


def _containers_ready(pod: dict[str, Any]) -> tuple[int, int]:
    spec_count = len((pod.get("spec") or {}).get("containers") or [])
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    return sum(bool(s.get("ready")) for s in statuses), max(spec_count, len(statuses))


def _name(pod: dict[str, Any]) -> str:
    return str((pod.get("metadata") or {}).get("name", "?"))


def _ready_text(pod: dict[str, Any]) -> str:
    ready, total = _containers_ready(pod)
    return f"{ready}/{total}"


def _phase(pod: dict[str, Any]) -> str:
    return str((pod.get("status") or {}).get("phase") or "Unknown")


def pod_is_healthy(pod: dict[str, Any]) -> bool:
    ready, total = _containers_ready(pod)
    return (pod.get("status") or {}).get("phase") == "Running" and total > 0 and ready == total


def pod_problem(pod: dict[str, Any]) -> tuple[Cause, str] | None:
    """(cause, detail) of an unhealthy pod; None when it runs with every container ready."""
    if pod_is_healthy(pod):
        return None
    status = pod.get("status") or {}
    phase = status.get("phase") or "Unknown"
    name = _name(pod)
    ready, total = _containers_ready(pod)
    waiting = [
        f"{cs.get('name')}: {w.get('reason')}"
        + (f" ({cs.get('restartCount')} restarts)" if cs.get("restartCount") else "")
        for cs in status.get("containerStatuses") or []
        if (w := (cs.get("state") or {}).get("waiting") or {}).get("reason")
    ]
    extra = f"; {', '.join(waiting)}" if waiting else ""
    if phase == "Pending":
        for cond in status.get("conditions") or []:
            if cond.get("type") == "PodScheduled" and cond.get("status") == "False":
                why = cond.get("message") or cond.get("reason") or "unschedulable"
                return causes.PODS_PENDING, f"{name} Pending, not scheduled: {why}"
        return causes.PODS_STARTING, f"{name} Pending, {ready}/{total} ready{extra}"
    if phase == "Running":
        return causes.CONTAINERS_NOT_READY, f"{name} Running, {ready}/{total} ready{extra}"
    return causes.POD_FAILED, f"{name} {phase}{extra}"


def role_pods(pods: list[dict[str, Any]], container: str) -> list[dict[str, Any]]:
    """The endpoint's pods among those with the role label: they run the role's worker container
    (another endpoint in the namespace has its own `prefill-<name>`)."""
    return [
        p
        for p in pods
        if any(c.get("name") == container for c in (p.get("spec") or {}).get("containers") or [])
    ]


def judge_pods(
    name: str,
    pods: list[dict[str, Any]],
    context: dict[str, Any],
    missing: Cause,
    unhealthy: Cause | None = None,
) -> Check:
    """Every pod Running with all containers ready. `unhealthy` replaces the per-pod cause (the
    router's problems are the router's, not GPU capacity)."""
    if not pods:
        return Check.failed(name, "none found", missing, **context)
    problems = [(p, problem) for p in pods if (problem := pod_problem(p))]
    if not problems:
        shown = ", ".join(f"{_name(p)} {_ready_text(p)}" for p in pods)
        return Check.ok(name, f"Running, all containers ready: {shown}")
    first_pod, (cause, _) = problems[0]
    detail = "; ".join(text for _, (_, text) in problems)
    phase = (first_pod.get("status") or {}).get("phase")
    return Check.failed(
        name, detail, unhealthy or cause, **{**context, "pod": _name(first_pod), "phase": phase}
    )


# Roles --------------------------------------------------------------------------------------------


def judge_roles(roles: dict[str, set[str]], context: dict[str, dict[str, Any]]) -> list[Check]:
    """roles: role -> the pd_role values its workers log (roles whose logs were read). Same role
    on both, swapped or missing roles fail with the matching cause."""
    checks = []
    prefill, decode = roles.get("prefill"), roles.get("decode")
    for role, found in roles.items():
        expected = EXPECTED_ROLE[role]
        name = f"{role} role '{expected}'"
        shown = ", ".join(f"'pd_role': '{r}'" for r in sorted(found)) or "no 'pd_role' line"
        ctx = {**context.get(role, {}), "role": role}
        if found == {expected}:
            checks.append(Check.ok(name, shown))
        elif prefill == {"receiver"} and decode == {"sender"}:
            checks.append(Check.failed(name, shown, causes.ROLES_SWAPPED, **ctx))
        elif len(found) == 1 and prefill == decode:
            checks.append(
                Check.failed(name, shown, causes.ROLES_SAME, **{**ctx, "role": next(iter(found))})
            )
        elif not found:
            checks.append(Check.failed(name, shown, causes.ROLE_MISSING, **ctx))
        else:
            wrong = ", ".join(f"'{r}'" for r in sorted(found))
            checks.append(
                Check.failed(name, shown, causes.ROLE_WRONG, **ctx, found=wrong, expected=expected)
            )
    return checks


# Prompts and what the logs say about them ---------------------------------------------------------


def judge_prompt(name: str, result: PromptResult, context: dict[str, Any]) -> Check:
    if result.ok:
        return Check.ok(name, f"HTTP {result.status}: {result.summary}")
    cause = causes.PROMPT_TIMEOUT if result.timed_out else causes.PROMPT_FAILED
    return Check.failed(name, result.summary, cause, **context)


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


def judge_kv(
    lines: list[logs.KvRetrieval], context: dict[str, Any], diagnostics: dict[str, str]
) -> list[Check]:
    received, speed = KV_RECEIVED, KV_SPEED
    if not lines:
        return [
            Check.failed(
                received,
                "no 'Retrieved ... required tokens' line for the long prompt",
                causes.KV_MISSING,
                **context,
            ),
            Check.skipped(speed, "no KV transfer line"),
        ]
    ranks = len(lines)
    zero = [r for r in lines if r.retrieved == 0]
    first = lines[0]
    if zero:
        detail = (
            f"Retrieved 0 out of {zero[0].required} required tokens on {len(zero)} of {ranks} "
            f"TP ranks; {diagnostics.get('recompute', '')}".rstrip("; ")
        )
        return [
            Check.failed(received, detail, causes.KV_RECOMPUTED, **context),
            Check.skipped(speed, "nothing was transferred"),
        ]
    partial = [r for r in lines if not r.complete]
    detail = (
        f"Retrieved {first.retrieved} out of {first.required} required tokens ({ranks} TP ranks)"
    )
    if partial:
        detail += f"; {len(partial)} rank(s) partial"
    checks = [Check.ok(received, detail)]
    speeds = [r.throughput_gbps for r in lines if r.throughput_gbps is not None]
    if not speeds:
        checks.append(Check.skipped(speed, "the lines report no throughput"))
    elif min(speeds) < MIN_THROUGHPUT_GBPS:
        detail = (
            f"{min(speeds):g} GB/s (slowest of {len(speeds)} TP ranks) < {MIN_THROUGHPUT_GBPS:g} "
            f"GB/s; {diagnostics.get('efa', '')}".rstrip("; ")
        )
        checks.append(Check.failed(speed, detail, causes.KV_SLOW, **context))
    else:
        checks.append(
            Check.ok(
                speed,
                f"{min(speeds):g} GB/s (slowest of {len(speeds)} TP ranks) >= "
                f"{MIN_THROUGHPUT_GBPS:g} GB/s",
            )
        )
    return checks


def judge_buffer(decoder_log: str, context: dict[str, Any]) -> Check:
    name = PD_BUFFER
    count = logs.buffer_full_count(decoder_log)
    if count:
        detail = f"{count} '{logs.BUFFER_FULL}' line(s) since the prompts"
        return Check.failed(name, detail, causes.BUFFER_FULL, **context)
    return Check.ok(name, f"no '{logs.BUFFER_FULL}' since the prompts")


def _worker_container(pod: dict[str, Any], container: str) -> dict[str, Any]:
    for c in (pod.get("spec") or {}).get("containers") or []:
        if c.get("name") == container:
            return c
    return {}


def _env(container: dict[str, Any]) -> dict[str, str]:
    return {
        str(e["name"]): str(e["value"])
        for e in container.get("env") or []
        if e.get("name") and e.get("value") is not None
    }


def kv_diagnostics(pods: dict[str, list[dict[str, Any]]], target: Target) -> dict[str, str]:
    """What the pods show about the usual causes of a failed KV transfer: the hash seed and image
    each role runs with (field-problems #8), the EFA devices each requests (#13)."""
    seeds, images, efa = [], [], []
    for role, ps in pods.items():
        containers = [(p, _worker_container(p, target.container(role))) for p in ps]
        role_seeds = sorted({_env(c).get("PYTHONHASHSEED", "unset") for _, c in containers})
        seeds.append(f"{role} {'/'.join(role_seeds) or '?'}")
        images.append((role, sorted({str(c.get("image", "?")) for _, c in containers})))
        for p, c in containers:
            resources = c.get("resources") or {}
            requested = {**(resources.get("requests") or {}), **(resources.get("limits") or {})}
            efa.append(f"{_name(p)} efa={requested.get('vpc.amazonaws.com/efa', 'none')}")
    distinct = {i for _, role_images in images for i in role_images}
    image_text = (
        "one image for both roles"
        if len(distinct) == 1
        else "images differ: " + "; ".join(f"{r} {', '.join(i)}" for r, i in images)
    )
    return {
        "recompute": f"PYTHONHASHSEED {', '.join(seeds)}; {image_text}",
        "efa": ("vpc.amazonaws.com/efa requested: " + ", ".join(efa)) if efa else "",
    }


# The run ------------------------------------------------------------------------------------------


def verify(
    cluster: Cluster,
    target: Target,
    prompt_client: PromptClient | None,
    options: Options,
    on_check: Callable[[Check], None] | None = None,
) -> Report:
    """Run every check. Raises EndpointNotFound when the IEC does not exist, ClusterError when
    the IEC cannot be read at all (both are bad input for the CLI)."""
    try:
        iec = cluster.get_iec(target.namespace, target.name)
    except ClusterError as exc:
        if exc.status == 404:
            raise EndpointNotFound(
                f"InferenceEndpointConfig {target.name} not found in namespace {target.namespace} "
                f"({cluster.server}); check --name/--namespace (or the stack's endpoint) and the "
                "kubeconfig context"
            ) from None
        raise
    run = _Run(cluster, target, prompt_client, options, on_check, iec)
    run.endpoint_and_pods()
    run.roles()
    run.prompts()
    return run.report


class _Run:
    def __init__(
        self,
        cluster: Cluster,
        target: Target,
        prompt_client: PromptClient | None,
        options: Options,
        on_check: Callable[[Check], None] | None,
        iec: dict[str, Any],
    ):
        self.cluster = cluster
        self.target = target
        self.client = prompt_client
        self.options = options
        self.on_check = on_check
        self.iec = iec
        self.facts = endpoint_facts(iec)
        if target.routing_threshold is not None:
            threshold, source = target.routing_threshold, "--routing-threshold"
        elif self.facts.threshold is not None:
            threshold, source = self.facts.threshold, "the IEC's pdSpec.routingThreshold"
        elif target.fallback_threshold is not None:
            threshold, source = target.fallback_threshold, "the stack config"
        else:
            threshold, source = DEFAULT_THRESHOLD, "the operator default"
        self.threshold = threshold
        via = prompt_client.description if (prompt_client and options.send_prompts) else "not sent"
        self.report = Report(target, threshold, source, via)
        self.base = {"name": target.name, "namespace": target.namespace}
        self.pods: dict[str, list[dict[str, Any]]] = {"prefill": [], "decode": []}
        self.router_pods: list[dict[str, Any]] = []

    def add(self, *checks: Check) -> None:
        for c in checks:
            self.report.checks.append(c)
            if self.on_check:
                self.on_check(c)

    def running(self, role: str) -> list[dict[str, Any]]:
        pods = self.router_pods if role == "router" else self.pods[role]
        return [p for p in pods if _phase(p) == "Running"]

    def log(
        self, namespace: str, pods: list[dict[str, Any]], container: str, since: int | None = None
    ) -> str:
        return "\n".join(
            self.cluster.read_log(
                namespace,
                _name(p),
                container,
                since_seconds=since,
                limit_bytes=self.options.log_bytes,
            )
            for p in pods
        )

    def endpoint_and_pods(self) -> None:
        t = self.target
        self.add(*judge_iec(self.iec, t))
        for role in ("prefill", "decode"):
            ctx = {**self.base, "role": role, "container": t.container(role)}
            try:
                labelled = self.cluster.list_pods(t.namespace, f"{ROLE_LABEL}={role}")
            except ClusterError as exc:
                self.add(Check.failed(f"{role} pods", str(exc), causes.API_ERROR, **ctx))
                continue
            self.pods[role] = role_pods(labelled, t.container(role))
            self.add(judge_pods(f"{role} pods", self.pods[role], ctx, causes.NO_PODS))
        ctx = {**self.base, "prefix": t.router_prefix}
        try:
            listed = self.cluster.list_pods(ROUTER_NAMESPACE)
        except ClusterError as exc:
            self.add(Check.failed("router pod", str(exc), causes.API_ERROR, **ctx))
            return
        self.router_pods = [p for p in listed if _name(p).startswith(t.router_prefix)]
        self.add(
            judge_pods(
                "router pod", self.router_pods, ctx, causes.ROUTER_MISSING, causes.ROUTER_NOT_READY
            )
        )

    def roles(self) -> None:
        """Role wiring, from the workers' startup lines."""
        found: dict[str, set[str]] = {}
        context: dict[str, dict[str, Any]] = {}
        not_judged: dict[str, Check] = {}
        for role in ("prefill", "decode"):
            name, container = f"{role} role '{EXPECTED_ROLE[role]}'", self.target.container(role)
            running = self.running(role)
            context[role] = {
                **self.base,
                "container": container,
                "pod": _name(running[0]) if running else "?",
            }
            if not running:
                not_judged[role] = Check.skipped(name, f"no running {role} pod")
                continue
            try:
                found[role] = logs.pd_roles(self.log(self.target.namespace, running, container))
            except ClusterError as exc:
                not_judged[role] = Check.failed(name, str(exc), causes.API_ERROR, **context[role])
        judged = {c.name.split()[0]: c for c in judge_roles(found, context)}
        self.add(*(not_judged.get(role) or judged[role] for role in ("prefill", "decode")))

    def prompts(self) -> None:
        """Short and long prompt, then what the router and the decoder logged for them."""
        if not self.options.send_prompts or self.client is None:
            self.add(*(Check.skipped(n, "prompts not sent (--no-prompts)") for n in PROMPT_CHECKS))
            return
        failed = [c.name for c in self.report.checks if c.result == FAIL]
        if blockers := [n for n in PROMPT_BLOCKERS if n in failed]:
            why = f"not sent: {', '.join(blockers)} failed"
            self.add(*(Check.skipped(n, why) for n in PROMPT_CHECKS))
            return
        model = self.options.model or self.facts.model
        router_running = self.running("router")
        ctx = {
            **self.base,
            "router_pod": _name(router_running[0]) if router_running else "?",
            "url": getattr(self.client, "url", "?"),
            "timeout": float(getattr(self.client, "timeout", 0)),
            "threshold": self.threshold,
            "max_model_len": self.facts.max_model_len,
        }
        started = time.monotonic()

        def since() -> int:
            return math.ceil(time.monotonic() - started) + LOG_SLACK_SECONDS

        short = short_prompt(model)
        short_result = self.client.send(short)
        self.add(judge_prompt(SHORT_ANSWERED, short_result, ctx))
        long = long_prompt(self.threshold, model, self.facts.max_model_len)
        long_result: PromptResult | None = None
        if long is None:
            detail = f"threshold {self.threshold}, max-model-len {self.facts.max_model_len}"
            self.add(Check.failed(LONG_ANSWERED, detail, causes.PROMPT_TOO_LONG, **ctx))
        else:
            long_result = self.client.send(long)
            self.add(judge_prompt(LONG_ANSWERED, long_result, ctx))

        answered = [
            (prompt, name)
            for prompt, result, name in (
                (short, short_result, SHORT_ROUTED),
                (long, long_result, LONG_ROUTED),
            )
            if prompt is not None and result is not None and result.ok
        ]
        self.routing(answered, router_running, since, ctx)
        if long is None or long_result is None or not long_result.ok:
            self.add(
                *(
                    Check.skipped(n, "the long prompt was not answered")
                    for n in (KV_RECEIVED, KV_SPEED, PD_BUFFER)
                )
            )
            return
        self.kv_transfer(long, since)

    def routing(
        self,
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
                    lambda: self.log(ROUTER_NAMESPACE, router_running, "router-container", since()),
                    lambda t: all(
                        match_decision(logs.routing_decisions(t), p) for p, _ in answered
                    ),
                    self.options,
                )
                checks.update(
                    {n: judge_routing(n, p, text, self.threshold, ctx) for p, n in answered}
                )
            except ClusterError as exc:
                checks.update(
                    {
                        n: Check.failed(n, str(exc), causes.API_ERROR, **self.base)
                        for _, n in answered
                    }
                )
        self.add(*checks.values())

    def kv_transfer(self, long: Prompt, since: Callable[[], int]) -> None:
        decoder = self.target.container("decode")
        running = self.running("decode")
        ctx = {**self.base, "container": decoder, "pod": _name(running[0]) if running else "?"}
        try:
            text = _read_until(
                lambda: self.log(self.target.namespace, running, decoder, since()),
                lambda t: bool(long_prompt_retrievals(t, long)),
                self.options,
            )
        except ClusterError as exc:
            names = (KV_RECEIVED, KV_SPEED, PD_BUFFER)
            self.add(*(Check.failed(n, str(exc), causes.API_ERROR, **ctx) for n in names))
            return
        diagnostics = kv_diagnostics(self.pods, self.target)
        self.add(*judge_kv(long_prompt_retrievals(text, long), ctx, diagnostics))
        self.add(judge_buffer(text, ctx))


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
