"""Judging the endpoint before any prompt: the InferenceEndpointConfig (ready, DPD, the facts
the later checks need), its prefill/decode/router pods, and the workers' sender/receiver roles."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.vllm.vllm_args import flag_value, merge_args
from hyperpod_dpd.verify import causes
from hyperpod_dpd.verify.causes import Cause
from hyperpod_dpd.verify.results import Check, Target

READY_MESSAGE = "DPD prefill and decode deployments are ready"
EXPECTED_ROLE = {"prefill": "sender", "decode": "receiver"}
DEFAULT_MODEL = "/opt/ml/model"


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
    try:  # role args replace worker args, the operator's rule (core/vllm/vllm_args.py)
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


def pod_name(pod: dict[str, Any]) -> str:
    return str((pod.get("metadata") or {}).get("name", "?"))


def pod_container(pod: dict[str, Any], name: str) -> dict[str, Any]:
    """The pod's container `name` ({} when it has none of that name)."""
    return next(
        (c for c in (pod.get("spec") or {}).get("containers") or [] if c.get("name") == name), {}
    )


def container_env(container: dict[str, Any]) -> dict[str, str | None]:
    """Name -> value of the container's env; None for a variable set from a Secret or field."""
    return {
        str(e["name"]): (None if e.get("value") is None else str(e["value"]))
        for e in container.get("env") or []
        if e.get("name")
    }


def _ready_text(pod: dict[str, Any]) -> str:
    ready, total = _containers_ready(pod)
    return f"{ready}/{total}"


def pod_phase(pod: dict[str, Any]) -> str:
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
    name = pod_name(pod)
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
        shown = ", ".join(f"{pod_name(p)} {_ready_text(p)}" for p in pods)
        return Check.ok(name, f"Running, all containers ready: {shown}")
    first_pod, (cause, _) = problems[0]
    detail = "; ".join(text for _, (_, text) in problems)
    phase = (first_pod.get("status") or {}).get("phase")
    return Check.failed(
        name, detail, unhealthy or cause, **{**context, "pod": pod_name(first_pod), "phase": phase}
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
