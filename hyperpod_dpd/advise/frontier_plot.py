"""The frontier PNG of `advise`, drawn with matplotlib in the benchmark venv.

  python hyperpod_dpd/advise/frontier_plot.py DATA.json OUT.png

DATA: {"title", "load", "tpotSloMs", "ttftSloMs", "points": [{"mode", "layout", "level",
"tpotMs", "tokensPerGpu", "meetsSlo", "misses": ["TTFT", "TPOT"...]}], "recommended"}. One panel
per load level: output tokens/s per GPU against predicted TPOT, each point labelled with its
layout, colocated layouts as circles, DPD as triangles (hollow: misses an SLO; a cross over it:
misses the TTFT SLO, which this axis cannot show), the recommended layout ringed, the TPOT SLO as
a vertical line and the TTFT SLO named in the legend, and the frontier: the layouts no other
beats on both axes (lower TPOT and more tokens/s per GPU). Only matplotlib and the standard
library: this file runs where the project is not installed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

MARKERS = {"colocated": ("o", "tab:blue"), "dpd": ("^", "tab:orange")}


def frontier(points: list[dict]) -> list[dict]:
    """The points no other beats on both axes (TPOT no higher and tokens/s per GPU no lower,
    one of them strictly), by TPOT."""
    best, out = -1.0, []
    for p in sorted(points, key=lambda p: (p["tpotMs"], -p["tokensPerGpu"])):
        if p["tokensPerGpu"] > best:
            out.append(p)
            best = p["tokensPerGpu"]
    return out


def draw(data: dict, out: Path) -> Path:
    levels = sorted({p["level"] for p in data["points"]})
    fig, axes = plt.subplots(1, len(levels), figsize=(5.5 * len(levels), 5.2), squeeze=False)
    for ax, level in zip(axes[0], levels, strict=True):
        points = [p for p in data["points"] if p["level"] == level]
        for mode, (marker, color) in MARKERS.items():
            mine = [p for p in points if p["mode"] == mode]
            for meets in (True, False):
                sel = [p for p in mine if p["meetsSlo"] is meets]
                ax.scatter([p["tpotMs"] for p in sel], [p["tokensPerGpu"] for p in sel],
                           marker=marker, s=40, edgecolors=color,
                           facecolors=color if meets else "none",
                           label=f"{mode}{'' if meets else ' (misses SLO)'}")  # fmt: skip
        for p in points:
            if p["layout"] == data.get("recommended"):
                ax.scatter([p["tpotMs"]], [p["tokensPerGpu"]], s=220, facecolors="none",
                           edgecolors="green", linewidths=2, label="recommended")  # fmt: skip
            if "TTFT" in p.get("misses", ()):
                ax.scatter([p["tpotMs"]], [p["tokensPerGpu"]], marker="x", s=60, color="black",
                           label=f"misses TTFT SLO ({data['ttftSloMs']:g} ms)")  # fmt: skip
            ax.annotate(p["layout"], (p["tpotMs"], p["tokensPerGpu"]), fontsize=6,
                        xytext=(4, 3), textcoords="offset points", color="dimgray")  # fmt: skip
        front = frontier(points)
        ax.plot([p["tpotMs"] for p in front], [p["tokensPerGpu"] for p in front], color="gray",
                linewidth=1, drawstyle="steps-post", zorder=0, label="frontier")  # fmt: skip
        if data.get("tpotSloMs"):
            ax.axvline(data["tpotSloMs"], color="red", linestyle="--",
                       label=f"TPOT SLO ({data['tpotSloMs']:g} ms)")  # fmt: skip
        ax.set_ylim(bottom=0)
        ax.set_title(f"{data['load']} {level:g}", fontsize=9)
        ax.set_xlabel("predicted TPOT p50 (ms)")
        ax.set_ylabel("output tokens/s per GPU")
        ax.grid(alpha=0.3)
    unique = {}
    for ax in axes[0]:
        handles, labels = ax.get_legend_handles_labels()
        unique |= dict(zip(labels, handles, strict=True))
    fig.legend(unique.values(), unique.keys(), fontsize=9, loc="lower center",
               ncol=min(len(unique), 4))  # fmt: skip
    fig.suptitle(data["title"], fontsize=10)
    fig.tight_layout(rect=(0, 0.16, 1, 1))
    fig.savefig(out)
    plt.close(fig)
    return out


def main(argv: list[str]) -> int:
    print(draw(json.loads(Path(argv[0]).read_text()), Path(argv[1])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
