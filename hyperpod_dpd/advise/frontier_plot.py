"""The frontier PNG of `advise`, drawn with matplotlib in the benchmark venv.

  python hyperpod_dpd/advise/frontier_plot.py DATA.json OUT.png

DATA (hyperpod_dpd/advise/chart.py): {"title", "load", "tpotSloMs", "ttftSloMs", "recommended",
"panelInches", "axesBox", "fontPoints", "panels": [{"level", "xlim", "ylim"}], "points":
[{"mode", "layout", "level", "tpotMs", "tokensPerGpu", "meetsSlo", "misses": ["TTFT", ...],
"frontier", "labelOffset": [dx, dy] (points; absent: no label)}]}. One panel per load level:
output tokens/s per GPU against predicted TPOT, colocated layouts as circles, DPD as triangles
(hollow: misses an SLO; a cross over it: misses the TTFT SLO, which this axis cannot show), the
recommended layout ringed, the TPOT SLO as a vertical line and the TTFT SLO named in the legend,
the frontier (the layouts no other beats on both axes) as a line, and the labels where chart.py
placed them, so that none covers another. Only matplotlib and the standard library: this file
runs where the project is not installed.
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
    panels = data["panels"]
    width, height = data["panelInches"]
    left, bottom, box_w, box_h = data["axesBox"]
    fig = plt.figure(figsize=(width * len(panels), height))
    axes = [fig.add_axes(((i + left) / len(panels), bottom, box_w / len(panels), box_h))
            for i in range(len(panels))]  # fmt: skip
    for ax, panel in zip(axes, panels, strict=True):
        points = [p for p in data["points"] if p["level"] == panel["level"]]
        for mode, (marker, color) in MARKERS.items():
            mine = [p for p in points if p["mode"] == mode]
            for meets in (True, False):
                sel = [p for p in mine if p["meetsSlo"] is meets]
                ax.scatter([p["tpotMs"] for p in sel], [p["tokensPerGpu"] for p in sel],
                           marker=marker, s=30, edgecolors=color,
                           facecolors=color if meets else "none",
                           label=f"{mode}{'' if meets else ' (misses SLO)'}")  # fmt: skip
        for p in points:
            if p["layout"] == data.get("recommended"):
                ax.scatter([p["tpotMs"]], [p["tokensPerGpu"]], s=160, facecolors="none",
                           edgecolors="green", linewidths=2, label="recommended")  # fmt: skip
            if "TTFT" in p.get("misses", ()):
                ax.scatter([p["tpotMs"]], [p["tokensPerGpu"]], marker="x", s=40, color="black",
                           label=f"misses TTFT SLO ({data['ttftSloMs']:g} ms)")  # fmt: skip
            if "labelOffset" in p:
                ax.annotate(p["layout"], (p["tpotMs"], p["tokensPerGpu"]),
                            fontsize=data["fontPoints"], xytext=tuple(p["labelOffset"]),
                            textcoords="offset points", va="bottom", ha="left",
                            color="black" if p.get("frontier") else "dimgray")  # fmt: skip
        front = sorted((p for p in points if p.get("frontier")), key=lambda p: p["tpotMs"])
        ax.plot([p["tpotMs"] for p in front], [p["tokensPerGpu"] for p in front], color="gray",
                linewidth=1, drawstyle="steps-post", zorder=0, label="frontier")  # fmt: skip
        if data.get("tpotSloMs"):
            ax.axvline(data["tpotSloMs"], color="red", linestyle="--",
                       label=f"TPOT SLO ({data['tpotSloMs']:g} ms)")  # fmt: skip
        ax.set_xlim(*panel["xlim"])
        ax.set_ylim(*panel["ylim"])
        ax.set_title(f"{data['load']} {panel['level']:g}", fontsize=9)
        ax.set_xlabel("predicted TPOT p50 (ms)")
        ax.set_ylabel("output tokens/s per GPU")
        ax.grid(alpha=0.3)
    unique = {}
    for ax in axes:
        handles, labels = ax.get_legend_handles_labels()
        unique |= dict(zip(labels, handles, strict=True))
    fig.legend(unique.values(), unique.keys(), fontsize=9, loc="lower center",
               ncol=min(len(unique), 4))  # fmt: skip
    fig.suptitle(data["title"], fontsize=10)
    fig.savefig(out)
    plt.close(fig)
    return out


def main(argv: list[str]) -> int:
    print(draw(json.loads(Path(argv[0]).read_text()), Path(argv[1])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
