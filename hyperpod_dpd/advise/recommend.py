"""Which layout to deploy, and why.

A layout meets the SLOs when it meets them at every load level asked (the peak included). Of
those, the cheapest: the fewest nodes (the hourly bill; one instance type), then the lowest cost
per million output tokens at the highest level. When DPD's best is not the pick, the reason says
"DPD does not pay here" and what DPD would have cost; when nothing meets the SLOs, the layout
that comes closest (the smallest worst miss, in percent over the SLO) and by how much.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from hyperpod_dpd.advise.search import Candidate, Layout
from hyperpod_dpd.advise.workload import Workload


@dataclass(frozen=True)
class Recommendation:
    layout: Layout
    meets: bool
    why: str


def by_layout(candidates: list[Candidate]) -> dict[Layout, list[Candidate]]:
    grouped: dict[Layout, list[Candidate]] = defaultdict(list)
    for c in candidates:
        grouped[c.layout].append(c)
    return grouped


def _cost_key(rows: list[Candidate]) -> tuple[int, float]:
    top = max(rows, key=lambda c: c.level)
    return (top.layout.nodes, top.cost_per_million if top.cost_per_million is not None else 0.0)


def _worst_miss(rows: list[Candidate]) -> tuple[float, Candidate, str, float, float]:
    """(percent over the SLO, at which row, metric, predicted, SLO) of the worst miss."""
    worst = (0.0, rows[0], "", 0.0, 0.0)
    for row in rows:
        for metric, value, slo in row.misses:
            over = (value - slo) / slo * 100
            if over > worst[0]:
                worst = (over, row, metric, value, slo)
    return worst


def _at(workload: Workload, c: Candidate) -> str:
    return f"{'concurrency' if workload.load == 'concurrency' else 'rps'} {c.level:g}"


def _summary(layout: Layout, rows: list[Candidate]) -> str:
    tpot = max(r.tpot_ms for r in rows)
    ttft = max(r.ttft_ms for r in rows)
    return f"{layout.label} ({layout.nodes} node{'s' * (layout.nodes > 1)}; worst TTFT {ttft:.0f} ms, TPOT {tpot:.1f} ms)"


def _per_token(rows: list[Candidate]) -> float:
    top = max(rows, key=lambda c: c.level)
    return top.cost_per_million if top.cost_per_million is not None else float("inf")


def _cheapest_per_token(
    grouped: dict[Layout, list[Candidate]], workload: Workload
) -> Recommendation:
    """No SLO given: nothing to meet, so the layout that makes an output token cheapest at the
    highest level asked (no price known: the fewest nodes)."""
    best, rows = min(grouped.items(), key=lambda kv: (_per_token(kv[1]), kv[0].nodes))
    top = max(rows, key=lambda c: c.level)
    cost = "" if top.cost_per_million is None else f" (${top.cost_per_million:.2f} per million)"
    return Recommendation(
        best,
        True,
        f"no SLO was given (--ttft-ms, --tpot-ms), so nothing was checked against one: "
        f"{_summary(best, rows)} makes output tokens cheapest at {_at(workload, top)}{cost}. "
        "Give the SLOs your users need to rank by what meets them.",
    )


def recommend(candidates: list[Candidate], workload: Workload) -> Recommendation | None:
    grouped = by_layout(candidates)
    if not grouped:
        return None
    if not (workload.ttft_ms or workload.tpot_ms):
        return _cheapest_per_token(grouped, workload)
    meeting = {lay: rows for lay, rows in grouped.items() if all(r.meets_slo for r in rows)}
    slo = "the SLOs"
    if not meeting:
        ranked = sorted(grouped.items(), key=lambda kv: (_worst_miss(kv[1])[0], _cost_key(kv[1])))
        layout, rows = ranked[0]
        over, row, metric, value, limit = _worst_miss(rows)
        return Recommendation(
            layout,
            False,
            f"no layout within the node budget meets the SLOs at every level; closest: "
            f"{layout.label}, {metric} {value:.1f} ms against {limit:g} ms (+{over:.0f}%) at "
            f"{_at(workload, row)}. Raise --max-nodes, relax the SLO, or lower the load.",
        )
    best, rows = min(meeting.items(), key=lambda kv: _cost_key(kv[1]))
    other_mode = "dpd" if best.mode == "colocated" else "colocated"
    others = {lay: r for lay, r in meeting.items() if lay.mode == other_mode}
    why = f"{_summary(best, rows)} is the cheapest layout meeting {slo} at every level"
    if best.mode == "colocated":
        if others:
            dpd, dpd_rows = min(others.items(), key=lambda kv: _cost_key(kv[1]))
            why += (
                f". DPD does not pay here: its cheapest layout meeting them, {_summary(dpd, dpd_rows)}"
                f", needs {dpd.nodes - best.nodes:+d} node(s)"
            )
        else:
            why += ". DPD does not pay here: no DPD layout within the budget meets them"
    else:
        colocated = [(lay, r) for lay, r in grouped.items() if lay.mode == "colocated"]
        if others:
            lay, r = min(others.items(), key=lambda kv: _cost_key(kv[1]))
            why += f"; colocated meets them only with {_summary(lay, r)}"
        elif colocated:
            lay, r = min(colocated, key=lambda kv: _worst_miss(kv[1])[0])
            over, row, metric, value, limit = _worst_miss(r)
            why += (
                f"; no colocated layout within the budget does (closest: {lay.label}, {metric} "
                f"{value:.1f} ms against {limit:g} ms at {_at(workload, row)})"
            )
    return Recommendation(best, True, why + ".")


def cheapest_meeting(candidates: list[Candidate], mode: str) -> Layout | None:
    """The cheapest layout of `mode` meeting the SLOs at every level (None: none does)."""
    meeting = {
        lay: rows
        for lay, rows in by_layout(candidates).items()
        if lay.mode == mode and all(r.meets_slo for r in rows)
    }
    if not meeting:
        return None
    return min(meeting.items(), key=lambda kv: _cost_key(kv[1]))[0]


def ranked(candidates: list[Candidate], workload: Workload) -> list[Layout]:
    """Every layout, best first as `recommend` weighs them: those meeting the SLOs at every
    level by cost, then the others by their worst miss; without SLOs, by cost per token."""
    grouped = by_layout(candidates)
    if not (workload.ttft_ms or workload.tpot_ms):
        return sorted(grouped, key=lambda lay: (_per_token(grouped[lay]), lay.nodes))

    def key(lay: Layout) -> tuple:
        rows = grouped[lay]
        meets = all(r.meets_slo for r in rows)
        return (not meets, _cost_key(rows) if meets else (_worst_miss(rows)[0], *_cost_key(rows)))

    return sorted(grouped, key=key)
