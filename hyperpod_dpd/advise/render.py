"""What `advise` prints: the recommendation and the few layouts nearest it (text; every row with
--all), or the JSON contract (--format json, every row):

  {"engine": {"name": "aisimulate", "version"}, "workload": {...}, "candidates": [{"mode",
   "layout", "nodes", "gpus", "concurrency" (or "rps"), "ttftMs", "tpotMs", "e2eMs",
   "outputTokensPerSecondPerGpu", "costPerMillionOutputTokens", "meetsSlo"}],
   "recommendation": {"mode", "layout", "why", "meetsSlo", "config", "autoscaling",
   "inEndpointMode"}}: with meetsSlo false, the layout is the closest to the SLOs, not a
   recommendation, and config and autoscaling are null. `config` is the stack-file patch that
   deploys the layout; `autoscaling` its pools' targets from the SLO (hyperpod_dpd/advise/
   scaling.py), null without an SLO; `inEndpointMode` (only for a stack's endpoint whose mode is
   not the recommendation's): its own mode's best layout, its config and autoscaling, which
   `--write` applies (it keeps the endpoint's mode), or null when no layout of that mode meets
   the SLOs.

A number beside an SLO is shown with the decimals it takes to compare with the SLO as the value
does: a TPOT of 15.04 ms against 15 ms reads 15.04, never 15.0 beside a "no".
"""

from __future__ import annotations

import json
from typing import Any

from core.json_output import dumps
from hyperpod_dpd.advise.recommend import Recommendation, ranked
from hyperpod_dpd.advise.search import Candidate, Layout
from hyperpod_dpd.advise.workload import Workload

HEADER = ("layout", "nodes", "GPUs", "TTFT ms", "TPOT ms", "E2E ms", "tok/s/GPU", "$/1M out", "SLO")
NEAREST = 3  # layouts shown after the recommendation, besides the other mode's best
NOTATION = (
    "layouts: 2x TP8 = 2 colocated workers, each over 8 GPUs (tensor parallel 8); "
    "1P2D TP4/TP8 = 1 prefill and 2 decode workers, prefill at TP 4, decode at TP 8. "
    "Each worker owns a node."
)


def contract(
    engine: dict[str, Any],
    workload: Workload,
    candidates: list[Candidate],
    recommendation: Recommendation | None,
    advice: Any | None,
    kept: Any | None,
    endpoint_mode: str | None,
) -> dict[str, Any]:
    """`advice`: the recommended layout's (hyperpod_dpd/advise/command.py Advice, None when it
    misses the SLOs); `kept`: the endpoint's own mode's, where that mode is not the
    recommendation's."""
    rec = None
    if recommendation is not None:
        rec = {
            "mode": recommendation.layout.mode,
            "layout": recommendation.layout.label,
            "why": recommendation.why,
            "meetsSlo": recommendation.meets,
            "config": None if advice is None else advice.config,
            "autoscaling": None,
        }
        if advice is not None and advice.scaling is not None:
            rec["autoscaling"] = advice.scaling.as_json(workload)
        if endpoint_mode is not None and endpoint_mode != recommendation.layout.mode:
            rec["inEndpointMode"] = None if kept is None else kept.as_json(workload, True)
    return {
        "engine": {"name": engine["name"], "version": engine["version"]},
        "workload": workload.as_json(),
        "candidates": [c.as_json(workload) for c in candidates],
        "recommendation": rec,
    }


def as_json(document: dict[str, Any]) -> str:
    return dumps(document)


def shown(value: float, slo: float | None, decimals: int) -> str:
    """`value` to `decimals`, or as many more as it takes for the shown number to compare with
    `slo` as the value does (a miss never reads as a pass, nor a pass as a miss)."""
    text = f"{value:.{decimals}f}"
    if slo is None:
        return text
    for more in range(decimals, decimals + 4):
        text = f"{value:.{more}f}"
        if (float(text) > slo) == (value > slo):
            return text
    return f">{slo:g}" if value > slo else f"<={slo:g}"


def _row(c: Candidate, workload: Workload, slo: bool) -> tuple[str, ...]:
    cost = "-" if c.cost_per_million is None else f"{c.cost_per_million:.2f}"
    verdict = "-"
    if slo:
        verdict = "yes" if c.meets_slo else "no: " + ", ".join(m for m, _, _ in c.misses)
    return (
        c.layout.label, str(c.layout.nodes), str(c.gpus),
        shown(c.ttft_ms, workload.ttft_ms, 0), shown(c.tpot_ms, workload.tpot_ms, 1),
        f"{c.e2e_ms:.0f}", f"{c.tokens_per_s_per_gpu:.1f}", cost, verdict,
    )  # fmt: skip


def nearest(candidates: list[Candidate], workload: Workload, recommended: Layout | None,
            also: Layout | None = None) -> list[Layout]:  # fmt: skip
    """The layouts shown by default, best first: the recommended (or the closest), the NEAREST
    next in `recommend`'s order, the other mode's best, and `also` (the endpoint's mode's)."""
    order = ranked(candidates, workload)
    if recommended in order:  # the recommended first, whatever the order says
        order.remove(recommended)
        order.insert(0, recommended)
    shown_ = order[: 1 + NEAREST]
    other = next((lay for lay in order if lay.mode != order[0].mode), None) if order else None
    for extra in (other, also):
        if extra is not None and extra not in shown_:
            shown_.append(extra)
    return shown_


def tables(workload: Workload, candidates: list[Candidate], layouts: list[Layout]) -> str:
    """A table per load level of `layouts`' rows, in their order."""
    slo = bool(workload.ttft_ms or workload.tpot_ms)
    rank = {lay: n for n, lay in enumerate(layouts)}
    out = []
    for level in workload.levels:
        rows = sorted((c for c in candidates if c.level == level and c.layout in rank),
                      key=lambda c: rank[c.layout])  # fmt: skip
        body = [HEADER, *(_row(c, workload, slo) for c in rows)]
        widths = [max(len(r[i]) for r in body) for i in range(len(HEADER))]
        name = "concurrency" if workload.load == "concurrency" else "requests/s"
        out.append(f"\n{name} {level:g} (predicted, p50)")
        out += ["  " + "  ".join(cell.rjust(w) if 0 < i < len(HEADER) - 1 else cell.ljust(w)
                                 for i, (cell, w) in enumerate(zip(r, widths, strict=True))).rstrip()
                for r in body]  # fmt: skip
    return "\n".join(out)


def _scaling_lines(scaling: dict[str, Any] | None, indent: str) -> list[str]:
    if scaling is None:
        return []
    slo = scaling["slo"]
    held = ", ".join(f"{name} {scaling['percentile']} <= {value:g} ms"
                     for name, value in (("TTFT", slo["ttftMs"]), ("TPOT", slo["tpotMs"])) if value)  # fmt: skip
    lines = [f"{indent}autoscaling from the SLO ({held}, the simulator's medians), per replica:"]
    for pool in ("prefill", "decode", "colocated"):
        p = scaling.get(pool)
        if p is None:
            continue
        rate = f", {p['requestsPerSecond']:g} requests/s" if "requestsPerSecond" in p else ""
        lines.append(
            f"{indent}  {pool}: {p['metric']} {p['target']:g} per replica (one holds "
            f"{'at least ' if p.get('atLeast') else ''}{p['capacity']:g}{rate} within "
            f"{p['limit']}); replicas {p['minReplicas']}-{p['maxReplicas']}"
        )
    ratio = scaling.get("ratio")
    if ratio is not None:
        leader = "prefill" if ratio["follower"] == "decode" else "decode"
        lines.append(
            f"{indent}  ratio {ratio['prefill']}:{ratio['decode']} (prefill:decode): "
            f"{ratio['follower']} never below {ratio[ratio['follower']]} per "
            f"{ratio[leader]} {leader} replicas"
        )
    lines += [f"{indent}  note: {n}" for n in scaling["notes"]]
    return lines


def text(document: dict[str, Any], workload: Workload, candidates: list[Candidate],
         refused: list[str], chart: str | None, every_row: bool = False) -> str:  # fmt: skip
    engine = document["engine"]
    lines = [f"advise: {workload.describe()} ({engine['name']} {engine['version']})", NOTATION]
    rec = document["recommendation"]
    by_label = {c.layout.label: c.layout for c in candidates}
    recommended = by_label.get(rec["layout"]) if rec else None
    kept = (rec or {}).get("inEndpointMode")
    also = by_label.get(kept["layout"]) if kept else None
    every = ranked(candidates, workload)
    layouts = every if every_row else nearest(candidates, workload, recommended, also)
    if every_row and recommended in layouts:
        layouts.remove(recommended)
        layouts.insert(0, recommended)
    lines.append(tables(workload, candidates, layouts))
    if len(layouts) < len(every):
        lines.append(f"\n({len(layouts)} of {len(every)} layouts: the recommendation first, then "
                     "the nearest; --all shows every row, --format json has them all)")  # fmt: skip
    if refused:
        lines.append(f"\nnot simulated ({len(refused)}): " + "; ".join(refused[:4]))
    if rec is not None and not rec["meetsSlo"]:
        lines.append(f"\nno recommendation: {rec['why']}")
    elif rec is not None:
        lines.append(f"\nrecommendation: {rec['mode']} {rec['layout']}\n  {rec['why']}")
        lines += _scaling_lines(rec["autoscaling"], "  ")
        if rec["config"] is not None:
            lines.append("  stack-file patch" + ("" if "inEndpointMode" in rec
                                                  else " (--write applies it)") + ":")  # fmt: skip
            lines += ["    " + line for line in json.dumps(rec["config"], indent=2).splitlines()]
        if "inEndpointMode" in rec:
            lines += _kept_lines(kept, rec)
    if chart:
        lines.append(f"\nfrontier chart: {chart}")
    return "\n".join(lines)


def _kept_lines(kept: dict[str, Any] | None, rec: dict[str, Any]) -> list[str]:
    mode = "dpd" if rec["mode"] == "colocated" else "colocated"
    if kept is None:
        return [f"\nthe endpoint runs {mode}: no {mode} layout within the node budget meets the "
                "SLOs, so --write, which keeps the endpoint's mode, writes nothing"]  # fmt: skip
    lines = [f"\nthe endpoint runs {mode} (--write keeps its mode): its best layout, "
             f"{kept['mode']} {kept['layout']}"]  # fmt: skip
    lines += _scaling_lines(kept["autoscaling"], "  ")
    lines.append("  stack-file patch (--write applies it):")
    lines += ["    " + line for line in json.dumps(kept["config"], indent=2).splitlines()]
    return lines
