"""What `advise` prints: a table per load level and the recommendation (text), or the JSON
contract (--format json):

  {"engine": {"name": "aisimulate", "version"}, "workload": {...}, "candidates": [{"mode",
   "layout", "nodes", "gpus", "concurrency" (or "rps"), "ttftMs", "tpotMs", "e2eMs",
   "outputTokensPerSecondPerGpu", "costPerMillionOutputTokens", "meetsSlo"}],
   "recommendation": {"mode", "layout", "why", "meetsSlo", "config"}}: with meetsSlo false, the
   layout is the closest to the SLOs, not a recommendation, and config is null
"""

from __future__ import annotations

import json
from typing import Any

from core.json_output import dumps
from hyperpod_dpd.advise.recommend import Recommendation
from hyperpod_dpd.advise.search import Candidate
from hyperpod_dpd.advise.workload import Workload

HEADER = ("layout", "nodes", "GPUs", "TTFT ms", "TPOT ms", "E2E ms", "tok/s/GPU", "$/1M out", "SLO")


def contract(
    engine: dict[str, Any],
    workload: Workload,
    candidates: list[Candidate],
    recommendation: Recommendation | None,
    config: dict[str, Any] | None,
) -> dict[str, Any]:
    rec = None
    if recommendation is not None:
        rec = {
            "mode": recommendation.layout.mode,
            "layout": recommendation.layout.label,
            "why": recommendation.why,
            "meetsSlo": recommendation.meets,
            "config": config,
        }
    return {
        "engine": {"name": engine["name"], "version": engine["version"]},
        "workload": workload.as_json(),
        "candidates": [c.as_json(workload) for c in candidates],
        "recommendation": rec,
    }


def as_json(document: dict[str, Any]) -> str:
    return dumps(document)


def _row(c: Candidate, slo: bool) -> tuple[str, ...]:
    cost = "-" if c.cost_per_million is None else f"{c.cost_per_million:.2f}"
    return (
        c.layout.label, str(c.layout.nodes), str(c.gpus), f"{c.ttft_ms:.0f}", f"{c.tpot_ms:.1f}",
        f"{c.e2e_ms:.0f}", f"{c.tokens_per_s_per_gpu:.1f}", cost,
        ("yes" if c.meets_slo else "no") if slo else "-",
    )  # fmt: skip


def _order(workload: Workload):
    """Rows meeting the SLOs first, by nodes; without SLOs, by cost per output token."""
    if workload.ttft_ms or workload.tpot_ms:
        return lambda c: (not c.meets_slo, c.layout.nodes, c.tpot_ms)
    inf = float("inf")
    return lambda c: (inf if c.cost_per_million is None else c.cost_per_million, c.layout.nodes)


def tables(workload: Workload, candidates: list[Candidate]) -> str:
    out = []
    for level in workload.levels:
        rows = sorted((c for c in candidates if c.level == level), key=_order(workload))
        slo = bool(workload.ttft_ms or workload.tpot_ms)
        body = [HEADER, *(_row(c, slo) for c in rows)]
        widths = [max(len(r[i]) for r in body) for i in range(len(HEADER))]
        name = "concurrency" if workload.load == "concurrency" else "requests/s"
        out.append(f"\n{name} {level:g} (predicted, p50)")
        out += ["  " + "  ".join(cell.rjust(w) if i else cell.ljust(w)
                                 for i, (cell, w) in enumerate(zip(r, widths, strict=True)))
                for r in body]  # fmt: skip
    return "\n".join(out)


def text(document: dict[str, Any], workload: Workload, candidates: list[Candidate],
         refused: list[str], chart: str | None) -> str:  # fmt: skip
    engine = document["engine"]
    lines = [f"advise: {workload.describe()} ({engine['name']} {engine['version']})"]
    lines.append(tables(workload, candidates))
    if refused:
        lines.append(f"\nnot simulated ({len(refused)}): " + "; ".join(refused[:4]))
    rec = document["recommendation"]
    if rec is not None and not rec["meetsSlo"]:
        lines.append(f"\nno recommendation: {rec['why']}")
    elif rec is not None:
        lines.append(f"\nrecommendation: {rec['mode']} {rec['layout']}\n  {rec['why']}")
        if rec["config"] is not None:
            lines.append("  stack-file patch (--write applies it):")
            lines += ["    " + line for line in json.dumps(rec["config"], indent=2).splitlines()]
    if chart:
        lines.append(f"\nfrontier chart: {chart}")
    return "\n".join(lines)
