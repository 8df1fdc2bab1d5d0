"""Judging the KV transfer of the long prompt: the decoder's "Retrieved N out of N" lines, their
throughput (>= 1 GB/s, or it is TCP, not EFA), the PD buffer, and what the pods show about the
usual causes when the transfer failed."""

from __future__ import annotations

from typing import Any

from core.images import ImageRefError, parse_image
from hyperpod_dpd.verify import causes, logs
from hyperpod_dpd.verify.endpoint import container_env, pod_container, pod_name
from hyperpod_dpd.verify.results import Check, Target

# Below 1 GB/s the transfer went over TCP, not EFA (AWS DPD troubleshooting, "KV cache transfer
# issues"; docs/troubleshooting.md#kv-transfer-slow).
MIN_THROUGHPUT_GBPS = 1.0

KV_RECEIVED, KV_SPEED, PD_BUFFER = (
    "KV cache received",
    "KV transfer throughput",
    "decoder PD buffer",
)


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


def _seed(env: dict[str, str | None]) -> str:
    if "PYTHONHASHSEED" not in env:
        return "unset"
    value = env["PYTHONHASHSEED"]
    return "from a Secret or field" if value is None else value


def _pulled(image_id: str) -> str | None:
    """The digest in a container's imageID (containerd: repo@sha256:...; older runtimes put a
    docker-pullable:// scheme before it)."""
    try:
        return parse_image(image_id.rpartition("://")[2]).digest
    except ImageRefError:
        return None


def _builds(pods: dict[str, list[dict[str, Any]]], target: Target) -> str:
    """What one image reference ran as: a tag pulled at different times can name different builds
    (the digest each pod's runtime resolved, containerStatuses[].imageID); pinned by digest, one."""
    digests = {}
    for role, ps in pods.items():
        for p in ps:
            for status in (p.get("status") or {}).get("containerStatuses") or []:
                digest = _pulled(str(status.get("imageID") or ""))
                if status.get("name") == target.container(role) and digest:
                    digests.setdefault(digest, []).append(pod_name(p))
    if len(digests) < 2:
        return ""
    shown = "; ".join(f"{d[:19]}... on {', '.join(names)}" for d, names in sorted(digests.items()))
    return f", but the pods run {len(digests)} builds of it ({shown}): pin it by digest"


def kv_diagnostics(pods: dict[str, list[dict[str, Any]]], target: Target) -> dict[str, str]:
    """What the pods show about the usual causes of a failed KV transfer: the hash seed and image
    each role runs with (docs/troubleshooting.md#kv-transfer-absent), the EFA devices each
    requests (#kv-transfer-slow)."""
    seeds, images, efa = [], [], []
    for role, ps in pods.items():
        containers = [(p, pod_container(p, target.container(role))) for p in ps]
        role_seeds = sorted({_seed(container_env(c)) for _, c in containers})
        seeds.append(f"{role} {'/'.join(role_seeds) or '?'}")
        images.append((role, sorted({str(c.get("image", "?")) for _, c in containers})))
        for p, c in containers:
            resources = c.get("resources") or {}
            requested = {**(resources.get("requests") or {}), **(resources.get("limits") or {})}
            efa.append(f"{pod_name(p)} efa={requested.get('vpc.amazonaws.com/efa', 'none')}")
    distinct = {i for _, role_images in images for i in role_images}
    image_text = (
        "one image for both roles" + _builds(pods, target)
        if len(distinct) == 1
        else "images differ: " + "; ".join(f"{r} {', '.join(i)}" for r, i in images)
    )
    return {
        "recompute": f"PYTHONHASHSEED {', '.join(seeds)}; {image_text}",
        "efa": ("vpc.amazonaws.com/efa requested: " + ", ".join(efa)) if efa else "",
    }
