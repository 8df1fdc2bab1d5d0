"""The PNGs of `benchmark compare`, drawn with matplotlib in the benchmark venv.

  python -m hyperpod_dpd.benchmark.plots DATA.json OUT_DIR

Laid out like the AWS article's: for each compared run, grouped bars of percent improvement
over BASE, one group per concurrency, one bar per metric (positive is better; output tokens/s
per GPU and USD per 1M output tokens when the runs recorded GPUs and cost), and one chart of
latency percentiles (p50/p95/p99 of TTFT, TPOT, ITL and E2E per run and concurrency). Prints the
files it wrote, one per line. Only matplotlib and the standard library: this file runs where
the project is not installed.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def improvement_chart(data: dict, run: str, out: Path) -> Path:
    levels, bars = data["levels"], data["improvements"][run]
    fig, ax = plt.subplots(figsize=(9, 4.8), dpi=100)
    width = 0.8 / len(bars)
    for i, (metric, values) in enumerate(bars.items()):
        xs = [x + (i - (len(bars) - 1) / 2) * width for x in range(len(levels))]
        heights = [v if v is not None else 0.0 for v in values]
        drawn = ax.bar(xs, heights, width, label=metric)
        shown = ["n/a" if v is None else f"{v:+.0f}%" for v in values]
        ax.bar_label(drawn, labels=shown, fontsize=7, padding=2)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(levels)), [f"concurrency {c}" for c in levels])
    ax.set_ylabel(f"improvement over {data['base']} (%)\npositive is better")
    ax.set_title(f"{run} vs {data['base']}: {_workload(data)}")
    ax.legend(fontsize=8, ncols=min(len(bars), 4), loc="upper center", bbox_to_anchor=(0.5, -0.08))
    fig.tight_layout()
    path = out / f"improvement-{_slug(run)}.png"
    fig.savefig(path)
    plt.close(fig)
    return path


PERCENTILE_STYLES = {"p50": "-", "p95": "--", "p99": ":"}  # line style: the percentile


def _workload(data: dict) -> str:
    """What every chart's title says the numbers are: the scenario, measured (not predicted)."""
    scenario = data.get("scenario") or "the runs' scenario"
    return f"{scenario}, measured"


def percentile_chart(data: dict, out: Path) -> Path:
    """One panel per latency; colour is the run, line style the percentile; y from zero; one
    legend for the figure (runs, then percentiles)."""
    from matplotlib.lines import Line2D

    metrics = data["percentiles"]
    runs = list(next(iter(metrics.values())))
    colours = {run: plt.get_cmap("tab10")(i % 10) for i, run in enumerate(runs)}
    fig, axes = plt.subplots(1, len(metrics), figsize=(4 * len(metrics), 4.4), dpi=100)
    for ax, (metric, by_run) in zip(axes, metrics.items(), strict=True):
        for run, stats in by_run.items():
            for p, style in PERCENTILE_STYLES.items():
                ys = [v if v is not None else float("nan") for v in stats[p]]
                ax.plot(data["levels"], ys, style, color=colours[run], marker="o", markersize=3)
        ax.set_title(f"{metric} (ms)")
        ax.set_xlabel("concurrency")
        ax.set_xticks(data["levels"])
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    handles = [Line2D([], [], color=colours[r], label=r) for r in runs]
    handles += [
        Line2D([], [], color="grey", linestyle=s, label=p) for p, s in PERCENTILE_STYLES.items()
    ]
    fig.legend(handles=handles, loc="lower center", ncols=len(handles), fontsize=8, frameon=False)
    fig.suptitle(f"Latency percentiles per run: {_workload(data)}")
    fig.tight_layout(rect=(0, 0.08, 1, 0.95))
    path = out / "latency-percentiles.png"
    fig.savefig(path)
    plt.close(fig)
    return path


def main(argv: list[str]) -> int:
    data = json.loads(Path(argv[0]).read_text())
    out = Path(argv[1])
    written = [improvement_chart(data, run, out) for run in data["improvements"]]
    written.append(percentile_chart(data, out))
    for path in written:
        print(path.name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
