"""`benchmark compare`: report.md, each metric of each run per concurrency and each run's
improvement over BASE in percent, and the data the charts are drawn from.

Sign convention: positive is better. For a latency (TTFT, TPOT, ITL, E2E) the improvement is
(BASE - RUN) / BASE; for a throughput (output tokens/s, requests/s) it is (RUN - BASE) / BASE.
So "TPOT +30%" means 30% less time per output token than BASE, "TTFT -5%" 5% more time to the
first token.
"""

from __future__ import annotations

from typing import Any

from hyperpod_dpd.loadtest.results import LATENCIES, LATENCY_TITLES, PERCENTILES

THROUGHPUTS = {"outputTokensPerSecond": "output tokens/s", "requestsPerSecond": "requests/s"}
COST = "USD per 1M output tokens"
# The article's bars: the p50s and the output throughput.
HEADLINE = [("ttft", "p50"), ("tpot", "p50"), ("itl", "p50"), ("e2e", "p50"),
            ("outputTokensPerSecond", None)]  # fmt: skip


class CompareError(ValueError):
    pass


def cost_per_million(run: dict[str, Any], level: dict[str, Any]) -> float | None:
    """The stack's hourly cost over the tokens it produced in an hour at this level's
    throughput: what a million output tokens cost at this concurrency (None without a cost)."""
    hourly = (run.get("endpoint") or {}).get("hourlyCostUsd")
    per_hour = level["outputTokensPerSecond"] * 3600
    if not hourly or not per_hour:
        return None
    return hourly / per_hour * 1_000_000


def value(level: dict[str, Any], metric: str, stat: str | None) -> float:
    return float(level[metric][stat] if stat else level[metric])


def improvement(base: float | None, run: float | None, metric: str) -> float | None:
    """Percent improvement of `run` over `base` (positive is better): lower is better for the
    latencies and the cost, higher for the throughputs. None when either is unknown or base 0."""
    if not base or run is None:
        return None
    if metric in THROUGHPUTS:
        return (run - base) / base * 100
    return (base - run) / base * 100


def label(metric: str, stat: str | None) -> str:
    if stat is None:
        return THROUGHPUTS[metric]
    return f"{LATENCY_TITLES[metric]} {stat}"


def common_levels(runs: list[dict[str, Any]]) -> list[int]:
    levels = [{int(c) for c in r["levels"]} for r in runs]
    shared = sorted(set.intersection(*levels))  # as numbers: 4, 8, 16 (not "16", "4", "8")
    if not shared:
        names = ", ".join(f"{r['label']}: {sorted(int(c) for c in r['levels'])}" for r in runs)
        raise CompareError(
            f"the runs share no concurrency level ({names}); rerun with one in common"
        )
    return shared


def rows(runs: list[dict[str, Any]], level: int) -> list[dict[str, Any]]:
    """Per metric: each run's value and each later run's improvement over the first."""
    key = str(level)
    metrics = [(m, p) for m in LATENCIES for p in ("mean", *PERCENTILES)]
    metrics += [(m, None) for m in THROUGHPUTS]
    out = []
    for metric, stat in metrics:
        values = [value(r["levels"][key], metric, stat) for r in runs]
        out.append({
            "metric": label(metric, stat),
            "key": (metric, stat),
            "values": values,
            "improvements": [improvement(values[0], v, metric) for v in values[1:]],
        })  # fmt: skip
    return out


def _pct(p: float | None) -> str:
    return "n/a" if p is None else f"{p:+.1f}%"


def report_md(runs: list[dict[str, Any]], charts: list[str]) -> str:
    base, others = runs[0], runs[1:]
    levels = common_levels(runs)
    lines = [
        "# Benchmark comparison",
        "",
        f"BASE: **{base['label']}**; compared: " + ", ".join(f"**{r['label']}**" for r in others),
        "",
        "Improvement is over BASE, and positive is better: less time for TTFT, TPOT, ITL and "
        "E2E latency; more output tokens/s and requests/s; fewer dollars per 1M output tokens "
        "(the stack's hourly cost from its plan, or --hourly-cost, over the measured output "
        "tokens/s).",
        "",
        "| run | scenario | mode | replicas (prefill/decode) | TP | threshold | chunked prefill "
        "| image | USD/hour |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        e = r.get("endpoint") or {}
        lines.append(
            f"| {r['label']} | {r['scenario']} | {e.get('mode', 'n/a')} | "
            f"{e.get('replicas', 'n/a')} | {e.get('tensorParallelSize', 'n/a')} | "
            f"{e.get('routingThreshold', 'n/a')} | {e.get('chunkedPrefill', 'n/a')} | "
            f"{e.get('image', 'n/a')} | {e.get('hourlyCostUsd', 'n/a')} |"
        )
    if len({r["scenario"] for r in runs}) > 1:
        lines += ["", "**Warning:** the runs used different scenarios; the numbers do not compare."]
    for level in levels:
        header = ["metric", *(r["label"] for r in runs), *(f"{r['label']} vs BASE" for r in others)]
        lines += ["", f"## Concurrency {level}", "", "| " + " | ".join(header) + " |",
                  "|" + "---|" * len(header)]  # fmt: skip
        for row in rows(runs, level):
            unit = "" if row["key"][1] is None else " ms"
            cells = [row["metric"], *(f"{v:,.1f}{unit}" for v in row["values"]),
                     *(_pct(p) for p in row["improvements"])]  # fmt: skip
            lines.append("| " + " | ".join(cells) + " |")
        costs = [cost_per_million(r, r["levels"][str(level)]) for r in runs]
        if any(c is not None for c in costs):
            cells = [COST, *("n/a" if c is None else f"${c:,.2f}" for c in costs)]
            cells += [_pct(improvement(costs[0], c, COST)) for c in costs[1:]]
            lines.append("| " + " | ".join(cells) + " |")
        errors = [f"{r['label']}: {r['levels'][str(level)]['errors']}" for r in runs]
        lines += ["", "Errors: " + ", ".join(errors)]
    lines += ["", "## Charts", ""] + [f"![{c}]({c})" for c in charts]
    return "\n".join(lines) + "\n"


def chart_data(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """What charts.py draws: the headline improvements per level, the latency percentiles."""
    levels = common_levels(runs)
    improvements = {
        r["label"]: {
            label(m, s): [
                improvement(value(runs[0]["levels"][str(c)], m, s),
                            value(r["levels"][str(c)], m, s), m)
                for c in levels
            ]
            for m, s in HEADLINE
        }
        for r in runs[1:]
    }  # fmt: skip
    percentiles = {
        LATENCY_TITLES[m]: {
            r["label"]: {p: [value(r["levels"][str(c)], m, p) for c in levels] for p in PERCENTILES}
            for r in runs
        }
        for m in LATENCIES
    }
    return {"levels": levels, "base": runs[0]["label"], "improvements": improvements,
            "percentiles": percentiles}  # fmt: skip
