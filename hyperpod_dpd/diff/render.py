"""`hyperpod-dpd diff`'s three outputs of one PlanDiff: markdown (a pull request comment), text
and JSON. Plans hold no secret values, so neither does any of them."""

from __future__ import annotations

from core.json_output import dumps
from core.vocabulary import COHERENT_CHANGE_RULE
from hyperpod_dpd.diff.compare import PlanDiff, plan_cost
from hyperpod_dpd.diff.values import change, shown
from hyperpod_dpd.plan.endpoint_summary import endpoint_table
from hyperpod_dpd.shared.cost import monthly


def _money(delta: float) -> str:
    return f"{'+' if delta >= 0 else '-'}${abs(delta):,.2f}"


def _short(urn: str) -> str:
    return urn.rsplit("::", 1)[-1]


def _cell(text: str) -> str:
    """A value inside a markdown table cell: code, its pipes escaped."""
    return "`" + text.replace("|", "\\|").replace("`", "'") + "`"


def render_markdown(d: PlanDiff) -> str:
    title = f"### hyperpod-dpd plan diff: stack `{d.head.stack}` ({d.base.label} → {d.head.label})"
    if d.empty:
        return f"{title}\n\nNo changes.\n"
    lines = [title, ""]
    replacing = [c for c in d.changed if c.replace]
    lines.append(
        f"**Resources:** {len(d.added)} to add, {len(d.changed)} to change "
        f"({len(replacing)} replaced), {len(d.removed)} to delete. "
        f"**Cost:** ${plan_cost(d.base):,.2f}/h → ${plan_cost(d.head):,.2f}/h ({_money(d.cost_delta)}/h, "
        f"about {_money(round(monthly(d.cost_delta), -1))[:-3]}/month)."
    )
    if replacing:
        lines += ["", "> [!WARNING]", "> These changes **replace** resources (delete and create):"]
        lines += [f"> - `{_short(c.urn)}` ({c.type}): {', '.join(c.replace)}" for c in replacing]
    for finding in d.coherent:
        mandatory = finding.level == "mandatory"
        lines += [
            "",
            "> [!CAUTION]" if mandatory else "> [!IMPORTANT]",
            f"> **{'Mandatory' if mandatory else 'Advisory'}, coherent change "
            f"(`{COHERENT_CHANGE_RULE}`):** {finding.message}",
        ]
    for advisory in d.advisories:
        lines += [
            "",
            "> [!IMPORTANT]",
            f"> **Advisory, one variable per iteration:** {advisory.message}",
        ]
    if d.added or d.removed or d.changed:
        lines += ["", "| | resource | type | changed inputs (old -> new) |", "|---|---|---|---|"]
        lines += [f"| + | `{r['name']}` | `{r['type']}` | |" for r in d.added]
        lines += [f"| - | `{r['name']}` | `{r['type']}` | |" for r in d.removed]
        for c in d.changed:
            mark = "±" if c.replace else "~"
            inputs = "<br>".join(
                _cell(change(p, a, b)) for p, a, b in c.values[:8]
            ) + (" …" if len(c.values) > 8 else "")  # fmt: skip
            lines.append(f"| {mark} | `{c.name}` | `{c.type}` | {inputs} |")
    if d.manifests:
        lines += ["", "#### Kubernetes manifests"]
        for name, text in d.manifests.items():
            lines += [
                "",
                f"<details><summary><code>{name}</code></summary>",
                "",
                "```diff",
                text.rstrip(),
                "```",
                "</details>",
            ]
    if d.new_violations or d.fixed_violations:
        lines += ["", "#### Policy"]
        lines += [
            f"- 🔴 new ({v['enforcement']}) `{v['policy']}` on `{_short(v['urn'])}`: {v['message']}"
            for v in d.new_violations
        ]
        lines += [f"- ✅ fixed `{v['policy']}` on `{_short(v['urn'])}`" for v in d.fixed_violations]
    if d.sizing_changes:
        lines += ["", "#### Sizing", "", f"| | {d.base.label} | {d.head.label} |", "|---|---|---|"]
        lines += [
            f"| {k} | {shown(k, a)} | {shown(k, b)} |" for k, (a, b) in d.sizing_changes.items()
        ]
    if d.number_changes:
        lines += ["", "#### Numbers the workers run with", ""]
        lines += [f"| | {d.base.label} | {d.head.label} | from |", "|---|---|---|---|"]
        lines += [
            f"| {k} | {shown(k, a)} | {shown(k, b)} | {f'`{w}`' if w else ''} |"
            for k, (a, b, w) in d.number_changes.items()
        ]
    lines += _endpoints(d)
    return "\n".join(lines) + "\n"


def _endpoints(d: PlanDiff) -> list[str]:
    """The head's endpoints at a glance (plans written before plan.json had them: none)."""
    rows = d.head.facts.get("endpoints") or []
    if not rows:
        return []
    return ["", f"#### Endpoints ({d.head.label})", "", *endpoint_table(rows)]


def render_text(d: PlanDiff) -> str:
    if d.empty:
        return f"{d.head.stack}: no changes"
    out = [f"{d.head.stack}: {d.base.label} -> {d.head.label}"]
    out += [f"  + {r['type']} {r['name']}" for r in d.added]
    out += [f"  - {r['type']} {r['name']}" for r in d.removed]
    for c in d.changed:
        flag = " (REPLACE: " + ", ".join(c.replace) + ")" if c.replace else ""
        out.append(f"  ~ {c.type} {c.name}{flag}")
        out += [f"      {change(p, a, b)}" for p, a, b in c.values]
    out += [f"  manifest {name} changed" for name in d.manifests]
    out += [f"  NEW {v['policy']}: {_short(v['urn'])}: {v['message']}" for v in d.new_violations]
    out += [f"  FIXED {v['policy']}: {_short(v['urn'])}" for v in d.fixed_violations]
    out += [f"  sizing {change(k, a, b)}" for k, (a, b) in d.sizing_changes.items()]
    out += [
        f"  number {change(k, a, b)}" + (f" ({w})" if w else "")
        for k, (a, b, w) in d.number_changes.items()
    ]
    out += [f"  {c.level.upper()} coherent change: {c.message}" for c in d.coherent]
    out += [f"  ADVISORY one variable per iteration: {a.message}" for a in d.advisories]
    out.append(
        f"  cost per hour: {plan_cost(d.base):.2f} -> {plan_cost(d.head):.2f} ({d.cost_delta:+.2f}; "
        f"about {_money(round(monthly(d.cost_delta), -1))[:-3]}/month)"
    )
    return "\n".join(out)


def render_json(d: PlanDiff) -> str:
    return dumps(
        {
            "stack": d.head.stack,
            "added": [r["urn"] for r in d.added],
            "removed": [r["urn"] for r in d.removed],
            "changed": [{"urn": c.urn, "paths": c.paths, "replace": c.replace} for c in d.changed],
            "manifests": d.manifests,
            "newViolations": d.new_violations,
            "fixedViolations": d.fixed_violations,
            "sizing": {k: {"base": a, "head": b} for k, (a, b) in d.sizing_changes.items()},
            "numbers": {
                k: {"base": a, "head": b, "from": w} for k, (a, b, w) in d.number_changes.items()
            },
            "advisories": [a.to_json() for a in d.advisories],
            "coherentChanges": [c.to_json() for c in d.coherent],
            "costPerHour": {
                "base": plan_cost(d.base),
                "head": plan_cost(d.head),
                "delta": d.cost_delta,
            },
        },
    )
