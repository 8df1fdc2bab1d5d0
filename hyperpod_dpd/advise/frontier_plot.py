"""The frontier PNG of `advise`, drawn with matplotlib in the benchmark venv.

  python hyperpod_dpd/advise/frontier_plot.py DATA.json OUT.png

DATA: {"title", "load", "tpotSloMs", "points": [{"mode", "layout", "level", "tpotMs",
"tokensPerGpu", "meetsSlo"}], "recommended"}. One panel per load level: output tokens/s per GPU
against predicted TPOT, colocated layouts as circles, DPD as triangles (hollow: misses an SLO),
the recommended layout ringed, the TPOT SLO as a vertical line. Only matplotlib and the standard
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


def draw(data: dict, out: Path) -> Path:
    levels = sorted({p["level"] for p in data["points"]})
    fig, axes = plt.subplots(1, len(levels), figsize=(4.5 * len(levels), 4.2), squeeze=False)
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
        if data.get("tpotSloMs"):
            ax.axvline(data["tpotSloMs"], color="red", linestyle="--", label="TPOT SLO")
        ax.set_title(f"{data['load']} {level:g}", fontsize=9)
        ax.set_xlabel("predicted TPOT p50 (ms)")
        ax.set_ylabel("output tokens/s per GPU")
        ax.grid(alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    unique = dict(zip(labels, handles, strict=True))
    fig.legend(unique.values(), unique.keys(), fontsize=7, loc="lower center", ncol=len(unique))
    fig.suptitle(data["title"], fontsize=10)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    fig.savefig(out)
    plt.close(fig)
    return out


def main(argv: list[str]) -> int:
    print(draw(json.loads(Path(argv[0]).read_text()), Path(argv[1])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
