"""The frontier chart: the data for frontier_plot.py, drawn in the benchmark venv (matplotlib is
there, not in the advise venv, which holds only what aisimulate's `predict` needs).

Which points carry their layout's name, and where, is decided here: a panel holds up to 26
layouts, most of them close together, and a label beside each piles them into an unreadable
block. The recommended layout is labelled first, then the frontier, then the layouts meeting the
SLOs, then the rest, each beside its point at the first of four places whose box overlaps no label
placed before it and no other point; a point with no free place stays unlabelled (the table has
every number). Boxes are estimated from the panel's size in points and the label's characters,
the axes' limits set here so that the estimate and the drawing agree.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

from hyperpod_dpd.advise.search import Candidate
from hyperpod_dpd.advise.workload import Workload
from hyperpod_dpd.shared.venvs import foreign_env, venv_from

ROOT = Path(__file__).resolve().parents[2]
PLOT = Path(__file__).with_name("frontier_plot.py")
PANEL_INCHES = (5.5, 5.2)  # one panel per load level
# The axes inside a panel, as fractions of it (left, bottom, width, height): frontier_plot.py
# places them there, so their size in points is known here.
AXES_BOX = (0.14, 0.30, 0.78, 0.6)
AXES_POINTS = (PANEL_INCHES[0] * 72 * AXES_BOX[2], PANEL_INCHES[1] * 72 * AXES_BOX[3])
FONT_POINTS = 6.0
CHAR_POINTS = 0.6 * FONT_POINTS  # an average glyph's width at that size
GAP = 3.0  # points between a point and its label
MARKER_POINTS = 6.0  # a point's marker, as an obstacle
RING_POINTS = 14.0  # the recommended layout's ring
# (dx, dy) of a label's lower-left corner from its point, in points, given its width and the
# gap to leave: above right, below right, above left, below left.
PLACES = (
    lambda w, g: (g, g),
    lambda w, g: (g, -g - FONT_POINTS),
    lambda w, g: (-g - w, g),
    lambda w, g: (-g - w, -g - FONT_POINTS),
)


def frontier(points: list[dict]) -> list[dict]:
    """The points no other beats on both axes (TPOT no higher and tokens/s per GPU no lower,
    one of them strictly), by TPOT."""
    best, out = -1.0, []
    for p in sorted(points, key=lambda p: (p["tpotMs"], -p["tokensPerGpu"])):
        if p["tokensPerGpu"] > best:
            out.append(p)
            best = p["tokensPerGpu"]
    return out


def limits(points: list[dict], tpot_slo: float | None) -> tuple[tuple[float, float], ...]:
    """The panel's x (TPOT, the SLO's line within) and y (tokens/s per GPU from 0) limits."""
    xs = [p["tpotMs"] for p in points] + ([tpot_slo] if tpot_slo else [])
    lo, hi = min(xs), max(xs)
    pad = (hi - lo) * 0.08 or 1.0
    top = max(p["tokensPerGpu"] for p in points) * 1.1 or 1.0
    return (lo - pad, hi + pad), (0.0, top)


def _boxes_overlap(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _within(box: tuple[float, ...]) -> bool:
    """Inside the axes."""
    return min(box[0], box[1]) >= 0 and box[2] <= AXES_POINTS[0] and box[3] <= AXES_POINTS[1]


def place_labels(points: list[dict], xlim: tuple[float, float], ylim: tuple[float, float],
                 order: list[dict], recommended: str | None = None
                 ) -> dict[int, tuple[float, float]]:  # fmt: skip
    """id(point) -> (dx, dy) of its label in points, for the points of `order` (by priority)
    that have a free place; the rest get no label. The `recommended` layout's ring is wider."""

    def at(p: dict) -> tuple[float, float]:
        return ((p["tpotMs"] - xlim[0]) / (xlim[1] - xlim[0]) * AXES_POINTS[0],
                (p["tokensPerGpu"] - ylim[0]) / (ylim[1] - ylim[0]) * AXES_POINTS[1])  # fmt: skip

    def marker(p: dict) -> tuple[float, float, float, float]:
        x, y = at(p)
        half = (RING_POINTS if p["layout"] == recommended else MARKER_POINTS) / 2
        return (x - half, y - half, x + half, y + half)

    taken = [marker(p) for p in points]
    placed: dict[int, tuple[float, float]] = {}
    for p in order:
        x, y = at(p)
        width = CHAR_POINTS * len(p["layout"])
        mine = marker(p)
        gap = GAP + (mine[2] - mine[0] - MARKER_POINTS) / 2  # outside the ring, if it has one
        for place in PLACES:
            dx, dy = place(width, gap)
            box = (x + dx, y + dy, x + dx + width, y + dy + FONT_POINTS)
            if _within(box) and not any(_boxes_overlap(box, t) for t in taken if t != mine):
                placed[id(p)] = (dx, dy)
                taken.append(box)
                break
    return placed


def chart_data(
    title: str, workload: Workload, candidates: list[Candidate], recommended: str | None
) -> dict:
    points = [
        {
            "mode": c.layout.mode,
            "layout": c.layout.label,
            "level": c.level,
            "tpotMs": c.tpot_ms,
            "tokensPerGpu": c.tokens_per_s_per_gpu,
            "meetsSlo": c.meets_slo,
            "misses": [metric for metric, _, _ in c.misses],
        }
        for c in candidates
    ]
    panels = []
    for level in sorted({p["level"] for p in points}):
        mine = [p for p in points if p["level"] == level]
        xlim, ylim = limits(mine, workload.tpot_ms)
        front = frontier(mine)
        for p in front:
            p["frontier"] = True
        order = sorted(mine, key=lambda p: (p["layout"] != recommended, not p.get("frontier"),
                                            not p["meetsSlo"], p["tpotMs"]))  # fmt: skip
        offsets = place_labels(mine, xlim, ylim, order, recommended)
        for p in mine:
            if id(p) in offsets:
                p["labelOffset"] = list(offsets[id(p)])
        panels.append({"level": level, "xlim": list(xlim), "ylim": list(ylim)})
    return {
        "title": title,
        "load": "concurrency" if workload.load == "concurrency" else "requests/s",
        "tpotSloMs": workload.tpot_ms,
        "ttftSloMs": workload.ttft_ms,
        "recommended": recommended,
        "panelInches": list(PANEL_INCHES),
        "axesBox": list(AXES_BOX),
        "fontPoints": FONT_POINTS,
        "panels": panels,
        "points": points,
    }


def draw(data: dict, out: Path, venv: Path = ROOT / "build" / "loadtest-venv") -> Path:
    venv = venv_from(ROOT / "requirements-loadtest.txt", venv)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "frontier.json"
        spec.write_text(json.dumps(data))
        subprocess.run([str(venv / "bin" / "python"), str(PLOT), str(spec), str(out)],
                       check=True, env=foreign_env(), stdout=subprocess.DEVNULL)  # fmt: skip
    return out
