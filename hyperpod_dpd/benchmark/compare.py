"""`benchmark compare`: report.md, each metric of each run per concurrency and each run's
improvement over BASE in percent, and the data the charts are drawn from.

Sign convention: positive is better. For a latency (TTFT, TPOT, ITL, E2E) and the cost the
improvement is (BASE - RUN) / BASE; for a throughput (output tokens/s, per GPU, requests/s) it is
(RUN - BASE) / BASE. So "TPOT +30%" means 30% less time per output token than BASE, "TTFT -5%" 5%
more time to the first token. The error rate's column is the difference in percentage points
(BASE - RUN: positive, fewer failed requests).

A canary compares the baseline and the candidate on TTFT and ITL p50/p95/p99, end-to-end
latency, error rate, output tokens/s per GPU and the cost per request: each level's table has
them all (GPUs from the run's recorded endpoint, replicas x GPUs per node or --gpus; the cost
from its hourly cost over the measured output tokens/s).
"""

from __future__ import annotations

from typing import Any

from hyperpod_dpd.benchmark.results import LATENCIES, LATENCY_TITLES, PERCENTILES

THROUGHPUTS = {"outputTokensPerSecond": "output tokens/s", "requestsPerSecond": "requests/s"}
COST = "USD per 1M output tokens"
PER_GPU = "output tokens/s per GPU"
ERROR_RATE = "error rate"
HIGHER_IS_BETTER = {*THROUGHPUTS, PER_GPU}
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


def per_gpu(run: dict[str, Any], level: dict[str, Any]) -> float | None:
    """Output tokens/s over the GPUs the run's endpoint holds (None: GPUs not recorded)."""
    gpus = (run.get("endpoint") or {}).get("gpus")
    return level["outputTokensPerSecond"] / gpus if gpus else None


def error_rate(level: dict[str, Any]) -> float | None:
    """Failed requests in percent of all sent (completed and failed); None: none sent."""
    errors = level.get("errors", 0)
    sent = level.get("requests", 0) + errors
    return errors / sent * 100 if sent else None


def value(level: dict[str, Any], metric: str, stat: str | None) -> float:
    return float(level[metric][stat] if stat else level[metric])


def improvement(base: float | None, run: float | None, metric: str) -> float | None:
    """Percent improvement of `run` over `base` (positive is better): lower is better for the
    latencies and the cost, higher for the throughputs. None when either is unknown or base 0."""
    if not base or run is None:
        return None
    if metric in HIGHER_IS_BETTER:
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
        "| run | scenario | mode | replicas (prefill/decode) | TP | GPUs | threshold "
        "| chunked prefill | image | USD/hour |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        e = r.get("endpoint") or {}
        lines.append(
            f"| {r['label']} | {r['scenario']} | {e.get('mode', 'n/a')} | "
            f"{e.get('replicas', 'n/a')} | {e.get('tensorParallelSize', 'n/a')} | "
            f"{e.get('gpus', 'n/a')} | "
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
        lines += _recipe_rows(runs, level)
        errors = [f"{r['label']}: {r['levels'][str(level)]['errors']}" for r in runs]
        lines += ["", "Errors: " + ", ".join(errors)]
    lines += ["", "## Charts", ""] + [f"![{c}]({c})" for c in charts]
    return "\n".join(lines) + "\n"


def _recipe_rows(runs: list[dict[str, Any]], level: int) -> list[str]:
    """The rows the raw numbers lack: per GPU and cost when any run knows them, error rate."""
    at = [r["levels"][str(level)] for r in runs]
    out = []
    for name, values, shown in (
        (PER_GPU, [per_gpu(r, lv) for r, lv in zip(runs, at, strict=True)], "{:,.1f}"),
        (COST, [cost_per_million(r, lv) for r, lv in zip(runs, at, strict=True)], "${:,.2f}"),
    ):
        if any(v is not None for v in values):
            cells = [name, *("n/a" if v is None else shown.format(v) for v in values)]
            cells += [_pct(improvement(values[0], v, name)) for v in values[1:]]
            out.append("| " + " | ".join(cells) + " |")
    rates = [error_rate(lv) for lv in at]
    cells = [ERROR_RATE, *("n/a" if v is None else f"{v:.2f}%" for v in rates)]
    cells += ["n/a" if rates[0] is None or v is None else f"{rates[0] - v:+.2f} pp"
              for v in rates[1:]]  # fmt: skip
    return [*out, "| " + " | ".join(cells) + " |"]


def _recipe_improvements(runs: list[dict[str, Any]], run: dict[str, Any], levels: list[int]):
    """Per GPU and cost, over BASE per level, when the runs recorded what they need."""
    out = {}
    for name, of in ((PER_GPU, per_gpu), (COST, cost_per_million)):
        values = [
            improvement(
                of(runs[0], runs[0]["levels"][str(c)]), of(run, run["levels"][str(c)]), name
            )
            for c in levels
        ]
        if any(v is not None for v in values):
            out[name] = values
    return out


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
        } | _recipe_improvements(runs, r, levels)
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
            "percentiles": percentiles, "scenario": runs[0].get("scenario", "")}  # fmt: skip
