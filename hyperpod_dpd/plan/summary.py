"""What a plan says to a person: the text `hyperpod-dpd plan` prints (or its JSON), and
summary.md (the endpoints at a glance, resources, violations, the hourly cost, the stack
outputs; each endpoint's facts and sizing: hyperpod_dpd/plan/endpoint_section.py)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from typing import Any

from core import api_key
from core.colour import PLAIN, Palette
from core.vocabulary import CHAT_COMPLETIONS_PATH
from hyperpod_dpd.plan.endpoint_section import endpoint_facts, render_sizing
from hyperpod_dpd.plan.endpoint_summary import headline, render_endpoints
from hyperpod_dpd.plan.resource_tree import render_tree
from hyperpod_dpd.shared.cost import HOURS_PER_MONTH, hourly_cost, per_hour_and_month, total
from hyperpod_dpd.shared.images import images_json, stack_images
from settings import StackSettings
from settings.cold_starts import pool_cold_starts


def resource_counts(resources: Iterable[Any]) -> list[tuple[str, int]]:
    """(type, count) of the plan's resources, by type."""
    return sorted(Counter(r.type for r in resources).items())


def cold_start_json(settings: StackSettings) -> dict[str, dict[str, dict]]:
    """plan.json's coldStart: per endpoint and pool, seconds per phase, caches off, on and as
    configured (settings/cold_starts.py)."""
    listed = settings.entries()
    alone = len(listed) == 1
    return {
        entry.label: {
            c.pool: c.to_json() for c in pool_cold_starts(entry, settings.instance_groups, alone)
        }
        for entry in listed
    }


def render_cold_start(settings: StackSettings) -> list[str]:
    """summary.md's estimate of a new worker's start, scheduled to ready, per endpoint and pool:
    caches off / caches on (a warm node), by phase (core/cold_start.py cites each figure)."""
    listed = settings.entries()
    rows = [
        (entry, c)
        for entry in listed
        for c in pool_cold_starts(entry, settings.instance_groups, len(listed) == 1)
    ]
    if not rows:
        return []
    out = [
        "",
        "## Cold start, scheduled to ready (estimate: caches off / on)",
        "",
        "| endpoint | pool | instance | image pull | weights read | load to GPU | warm-up | "
        "total | caches | autoscaled | first start, cold node | later start, warm node |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for entry, c in rows:
        off, on = c.off.to_json(), c.on.to_json()
        phases = " | ".join(
            f"{off[k]} s / {on[k]} s" for k in ("imagePull", "weightsRead", "loadToGpu", "warmUp")
        )
        cache = entry.config.cache
        caches = ", ".join(n for n in ("weights", "image") if getattr(cache, n)) or "off"
        out.append(
            f"| {entry.label} | {c.pool} | {c.instance_type} | {phases} | "
            f"{off['total']} s / {on['total']} s | {caches} | {'yes' if c.autoscaled else 'no'} | "
            f"{round(c.first.total)} s | {round(c.current.total)} s |"
        )
    out += [
        "",
        "Figures and their sources: core/cold_start.py. First start: the first worker on a "
        "node whose caches are not warm yet (a new endpoint or revision, a replaced node) is a "
        "cache miss: it reads the weights from S3 and pulls the image, caches on or off (the "
        "operator warms nodes beside the pods, not before them). Later start: a worker on a "
        "node the operator has warmed, as the endpoint's caches are set.",
    ]
    return out


def render_cost(settings: StackSettings) -> list[str]:
    lines = hourly_cost(settings)
    out = [
        "",
        f"## Cost: {per_hour_and_month(total(lines))} (estimate)",
        "",
        f"Nodes at their instance counts, billed by the hour; a month is {HOURS_PER_MONTH} hours.",
        "",
    ]
    out += ["| item | quantity | hourly | monthly | source |", "|---|---|---|---|---|"]
    for c in lines:
        price = "unknown" if c.hourly is None else f"${c.hourly:,.3f}"
        month = "unknown" if c.hourly is None else f"${c.total * HOURS_PER_MONTH:,.0f}"
        out.append(f"| {c.item} | {c.quantity} | {price} | {month} | {c.source} |")
    return out


def render_checkpoints(settings: StackSettings) -> list[str]:
    """Which endpoint serves which revision, from which staged copy: a line per endpoint when
    the stack stages more than one copy (endpoints.<key>.checkpoint)."""
    if len(settings.staged_checkpoints()) == 1:
        return []
    lines = ["", "## Checkpoints", "", "| endpoint | source | revision | staged under |"]
    lines.append("|---|---|---|---|")
    for entry in settings.entries():
        c = settings.checkpoint_of(entry)
        lines.append(f"| {entry.key} | {c.source} | {c.revision} | `{c.effective_prefix}` |")
    return lines


def render_summary(plan: Any) -> str:
    lines = [f"# Offline plan: stack `{plan.stack.stack}`", ""]
    s = plan.settings
    listed = s.entries()
    if len(listed) == 1 and listed[0].key is None:
        lines += ["## Endpoint", "", "| | |", "|---|---|"]
        lines += [f"| {k} | {v} |" for k, v in endpoint_facts(s, listed[0])]
        lines += render_sizing(s, listed[0])
    else:
        lines += render_endpoints(s)[1:]
        for entry in listed:
            lines += ["", f"### Endpoint `{entry.key}`", "", "| | |", "|---|---|"]
            lines += [f"| {k} | {v} |" for k, v in endpoint_facts(s, entry)]
            lines += render_sizing(s, entry, level="####")
    lines += render_split(s)
    lines += render_checkpoints(s)
    lines += render_cold_start(s)
    lines += ["", f"## Resources ({len(plan.run.resources)})", "", "| type | count |", "|---|---|"]
    lines += [f"| `{t}` | {n} |" for t, n in resource_counts(plan.run.resources)]
    if plan.stopped:
        lines += ["", plan.stopped_text]
    lines += render_images(plan.settings, plan.stack.stack)
    lines += ["", f"## Policy violations ({len(plan.violations)})", ""]
    if plan.violations:
        lines += ["| policy | enforcement | resource | message |", "|---|---|---|---|"]
        lines += [
            f"| {v.policy} | {v.enforcement} | `{v.urn.rsplit('::', 1)[-1]}` | {v.message} |"
            for v in plan.violations
        ]
    else:
        lines.append("None.")
    lines += render_cost(plan.settings)
    lines += ["", "## Stack outputs", "", "| output | value |", "|---|---|"]
    lines += [f"| {k} | `{json.dumps(v)}` |" for k, v in sorted(plan.run.outputs.items())]
    return "\n".join(lines) + "\n"


def render_split(s: StackSettings) -> list[str]:
    """How clients call the traffic split: its name (or the load balancer's own), the key each
    request carries, who may connect. Nothing without a split."""
    if not s.traffic:
        return []
    listener = s.traffic_listener
    if listener.domain_name is not None:
        where = (f"`https://{listener.domain_name}{CHAT_COMPLETIONS_PATH}` (an alias record in "
                 f"zone {listener.hosted_zone_id}; `hyperpod-dpd preflight` asks ACM that the "
                 "certificate covers it)")  # fmt: skip
    else:
        where = "the load balancer's own name over plain HTTP (stack output `trafficUrl`)"
    names = ", ".join(listener.api_key_names)
    clients = ", ".join(["the HyperPod nodes", *listener.allowed_cidrs,
                         *listener.allowed_security_group_ids])  # fmt: skip
    return [
        "", "## Traffic split", "", "| | |", "|---|---|",
        f"| clients call | {where} |",
        f"| each request carries | `{api_key.HEADER}: {api_key.SCHEME} <key>`, stack output "
        f"`{api_key.OUTPUT}` (a secret; keys {names}, the last handed out); any other gets 401 |",
        f"| who may connect | {clients} |",
    ]  # fmt: skip


def render_images(settings: StackSettings, stack: str) -> list[str]:
    """Each image the stack runs, pinned by digest or by tag alone (what
    hyperpod-dpd-images-by-digest judges), with the key that sets it."""
    images = stack_images(settings)
    by_tag = sum(not i.pinned for i in images)
    lines = ["", f"## Images ({len(images) - by_tag} pinned by digest, {by_tag} by tag alone)", ""]
    lines += ["| key | image | pinned |", "|---|---|---|"]
    lines += [
        f"| {i.key} | `{i.image}` | "
        + ("by digest |" if i.pinned else f"**by tag alone**: `hyperpod-dpd fetch --stack {stack}` "
           "prints the command that pins it |")
        for i in images
    ]  # fmt: skip
    return lines


def plan_json(plan: Any) -> dict:
    return {
        "stack": plan.stack.stack,
        "exitCode": plan.exit_code,
        "resources": len(plan.run.resources),
        "stopped": plan.stopped,
        "registeredBeforeStop": plan.registered_before_stop,
        "byType": dict(resource_counts(plan.run.resources)),
        "manifests": sorted(plan.manifests),
        "violations": [v.to_json() for v in plan.violations],
        "images": images_json(plan.settings),
        "outDir": str(plan.out_dir),
    }


def render_text(plan: Any, palette: Palette = PLAIN) -> str:
    s = plan.settings
    lines = [
        f"Offline plan of stack '{plan.stack.stack}': {s.region}, GPU AZ {s.availability_zone_id}, "
        f"{headline(s)}",
        "",
    ]
    if plan.stopped:
        lines += [plan.stopped_text, ""]
    else:
        lines += [
            "A first `pulumi up` of this stack would create (+) each of these, by component:",
            "",
            *render_tree(plan.run.resources, palette=palette),
            f"Cost: {per_hour_and_month(total(hourly_cost(s)))} (estimate; summary.md itemizes it)",
            "",
        ]
    if plan.violations:
        for level in ("mandatory", "advisory"):
            found = [v for v in plan.violations if v.enforcement == level]
            if found:
                paint = palette.red if level == "mandatory" else palette.yellow
                lines.append(paint(f"Policy violations, {level} ({len(found)}):"))
                lines += [f"  {v.policy}: {v.urn.rsplit('::', 1)[-1]}: {v.message}" for v in found]
    else:
        lines.append("Policy violations: none")
    lines.append(
        f"Wrote {plan.out_dir}/: summary.md (read this first), plan.json, resources.json, "
        f"manifests/ ({len(plan.manifests)}), policy-report.json"
    )
    return "\n".join(lines)
