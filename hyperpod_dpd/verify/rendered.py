"""What the operator rendered, against what the endpoint asked for (pure judges of pod JSON).

Two field problems no log line announces: the operator can drop or rewrite the worker variables
DPD depends on (aws/sagemaker-hyperpod-cli#431), and a decoder that started before a prefiller's
latest (re)start can hold that prefiller's dead NIXL agent (llm-d/llm-d#2187,
vllm-project/vllm#49238). docs/troubleshooting.md explains both to users.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hyperpod_dpd.verify import causes
from hyperpod_dpd.verify.endpoint import container_env, pod_container, pod_name
from hyperpod_dpd.verify.results import Check, Target

RENDERED_ENV = "rendered worker env"
DECODER_FRESH = "decoders newer than prefillers"
# Without these as asked, transfers silently degrade: the buffer size, decode-side caching off,
# one hash seed for both roles.
DPD_VARIABLES = ("PD_BUFFER_SIZE", "LMCACHE_SAVE_DECODE_CACHE", "PYTHONHASHSEED")


def judge_rendered_env(
    iec: dict[str, Any], pods: dict[str, list[dict[str, Any]]], target: Target
) -> Check:
    asked = {
        str(e.get("name")): e.get("value")
        for e in ((iec.get("spec") or {}).get("worker") or {}).get("environmentVariables") or []
    }
    wanted = {k: asked[k] for k in DPD_VARIABLES if k in asked}
    context = {"name": target.name, "namespace": target.namespace}
    if not any(pods.values()):
        return Check.skipped(RENDERED_ENV, "no worker pods to read")
    problems = []
    for role, role_pods in pods.items():
        for pod in role_pods:
            rendered = container_env(pod_container(pod, target.container(role)))
            for key, value in wanted.items():
                if key not in rendered:
                    problems.append(f"{pod_name(pod)} lacks {key}")
                elif rendered[key] != value:
                    problems.append(f"{pod_name(pod)} has {key}={rendered[key]} (asked {value})")
    if problems:
        return Check.failed(RENDERED_ENV, "; ".join(problems), causes.ENV_REWRITTEN, **context)
    shown = ", ".join(f"{k}={v}" for k, v in wanted.items())
    return Check.ok(RENDERED_ENV, f"every worker pod runs with {shown}")


def _started(pod: dict[str, Any], container: str) -> datetime | None:
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        if status.get("name") == container:
            running = (status.get("state") or {}).get("running") or {}
            if running.get("startedAt"):
                return datetime.fromisoformat(str(running["startedAt"]).replace("Z", "+00:00"))
    return None


def judge_decoder_freshness(pods: dict[str, list[dict[str, Any]]], target: Target) -> Check:
    """Each running decoder started after the latest (re)start of every prefiller."""
    prefill = [(p, _started(p, target.container("prefill"))) for p in pods.get("prefill", [])]
    decode = [(p, _started(p, target.container("decode"))) for p in pods.get("decode", [])]
    prefill = [(p, t) for p, t in prefill if t]
    decode = [(p, t) for p, t in decode if t]
    if not prefill or not decode:
        return Check.skipped(DECODER_FRESH, "no running prefill and decode workers to compare")
    latest_pod, latest = max(prefill, key=lambda x: x[1])
    stale = [(p, t) for p, t in decode if t < latest]
    context = {"name": target.name, "namespace": target.namespace}
    if stale:
        names = ", ".join(f"{pod_name(p)} (started {t:%Y-%m-%d %H:%M:%S}Z)" for p, t in stale)
        detail = f"{names} older than {pod_name(latest_pod)}'s start at {latest:%Y-%m-%d %H:%M:%S}Z"
        return Check.failed(DECODER_FRESH, detail, causes.STALE_DECODER, **context)
    return Check.ok(
        DECODER_FRESH, f"every decoder started after the last prefiller start ({latest:%H:%M:%S}Z)"
    )
