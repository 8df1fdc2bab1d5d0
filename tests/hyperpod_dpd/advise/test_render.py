"""What `advise` prints, read at a glance (hyperpod_dpd/advise/render.py): the recommendation and
the few layouts nearest it (every row under --all), the layout notation explained once, no miss
rounded into a pass, and the frontier chart's labels placed apart (hyperpod_dpd/advise/chart.py)."""

from __future__ import annotations

import pytest

from hyperpod_dpd.advise import chart, render
from hyperpod_dpd.advise.recommend import recommend
from hyperpod_dpd.advise.search import Candidate, Layout
from hyperpod_dpd.advise.workload import workload

LOAD = workload(4096, 256, None, [8, 16], None, 1000, 15, 131072, "ctx")
ENGINE = {"name": "aisimulate", "version": "0.13.0"}


def _candidate(layout: Layout, level: float, tpot: float, ttft: float = 200.0) -> Candidate:
    misses = tuple((m, v, s) for m, v, s in (("TTFT", ttft, 1000.0), ("TPOT", tpot, 15.0))
                   if v > s)  # fmt: skip
    return Candidate(layout, level, 8 * layout.nodes, ttft, tpot, ttft + 256 * tpot,
                     50.0 - tpot + layout.nodes, 10.0 * layout.nodes, not misses, misses)  # fmt: skip


LAYOUTS = [Layout("colocated", n, 8) for n in (1, 2, 3)] + [
    Layout("dpd", p, 8, d, 8) for p in (1, 2) for d in (1, 2, 3)
]


def _grid() -> list[Candidate]:
    """1x TP8 misses by 0.04 ms (15.04); the rest meet, the more nodes the lower the TPOT."""
    out = []
    for lay in LAYOUTS:
        for level in LOAD.levels:
            tpot = 15.04 if lay == Layout("colocated", 1, 8) else 16 - lay.nodes
            out.append(_candidate(lay, level, tpot))
    return out


@pytest.mark.parametrize(
    ("value", "slo", "decimals", "shown"),
    [(15.04, 15, 1, "15.04"), (15.0004, 15, 1, "15.0004"), (14.96, 15, 1, "15.0"),
     (14.955, 14.96, 1, "14.96"), (15.2, 15, 1, "15.2"), (15.00001, 15, 1, ">15"),
     (1000.4, 1000, 0, "1000.4"), (180.2, None, 0, "180")],
)  # fmt: skip
def test_a_miss_is_never_rounded_into_a_pass(value, slo, decimals, shown):
    assert render.shown(value, slo, decimals) == shown
    if slo is not None and shown[0] not in "<>":
        assert (float(shown) > slo) == (value > slo)


def _text(every_row=False):
    candidates = _grid()
    rec = recommend(candidates, LOAD)
    document = render.contract(ENGINE, LOAD, candidates, rec, None, None, None)
    return render.text(document, LOAD, candidates, [], None, every_row), rec


def test_by_default_the_recommendation_and_the_nearest_layouts_and_the_notation_once():
    text, rec = _text()
    assert text.count("1P2D TP4/TP8 = 1 prefill and 2 decode workers") == 1
    tables = text.split("\nconcurrency ")[1:]
    assert len(tables) == 2
    first = [line for line in tables[0].split("\n\n")[0].splitlines()[2:] if line.strip()]
    assert first[0].split()[:2] == rec.layout.label.split()[:2]  # the recommendation first
    # The nearest 3, and the other mode's best when they are all of the recommendation's mode.
    assert 1 + render.NEAREST <= len(first) <= 2 + render.NEAREST
    assert {line.split()[0][-1] for line in first} >= {"D", "x"}  # both modes (1P1D, 2x)
    second = [line for line in tables[1].split("\n\n")[0].splitlines()[2:] if line.strip()]
    assert [r.split()[:2] for r in second] == [r.split()[:2] for r in first]  # each level alike
    assert f"({len(first)} of {len(LAYOUTS)} layouts" in text and "--all shows every row" in text
    # The colocated miss reads 15.04 beside its "no", never 15.0.
    every, _ = _text(every_row=True)
    (miss,) = [line for line in every.split("\nconcurrency ")[1].splitlines() if "1x TP8" in line]
    assert " 15.04 " in miss and miss.rstrip().endswith("no: TPOT")


def test_all_rows_under_the_flag():
    text, rec = _text(every_row=True)
    first = [line for line in text.split("\nconcurrency ")[1].splitlines()[2:] if line.strip()]
    assert len(first) == len(LAYOUTS) and first[0].split()[:2] == rec.layout.label.split()[:2]
    assert "--all shows every row" not in text


def test_the_charts_labels_never_cover_one_another_nor_a_point():
    """26 layouts, most in a cluster: the labels placed overlap nothing, the recommended is
    labelled, the frontier before the rest, the cluster's others are left unlabelled rather than
    piled up."""
    layouts = [Layout("colocated", n, tp) for n in (1, 2, 3, 4) for tp in (4, 8)] + [
        Layout("dpd", p, 8, d, 8) for p in (1, 2, 3) for d in range(1, 5 - p)
    ] + [Layout("dpd", p, 4, d, 8) for p in (1, 2, 3) for d in range(1, 5 - p)]  # fmt: skip
    candidates = [_candidate(lay, 8, 10 + 0.05 * i) for i, lay in enumerate(layouts)]
    recommended = layouts[10].label
    data = chart.chart_data("t", LOAD, candidates, recommended)
    points = data["points"]
    labelled = [p for p in points if "labelOffset" in p]
    assert recommended in {p["layout"] for p in labelled}
    assert any(p.get("frontier") for p in labelled)
    assert len(labelled) < len(points)  # the cluster's others: no label rather than a pile
    (panel,) = data["panels"]

    def at(p):
        (x0, x1), (y0, y1) = panel["xlim"], panel["ylim"]
        return ((p["tpotMs"] - x0) / (x1 - x0) * chart.AXES_POINTS[0],
                (p["tokensPerGpu"] - y0) / (y1 - y0) * chart.AXES_POINTS[1])  # fmt: skip

    boxes = []
    for p in labelled:
        x, y = at(p)
        dx, dy = p["labelOffset"]
        width = chart.CHAR_POINTS * len(p["layout"])
        boxes.append((x + dx, y + dy, x + dx + width, y + dy + chart.FONT_POINTS))
    for i, a in enumerate(boxes):
        assert all(not chart._boxes_overlap(a, b) for b in boxes[i + 1 :])
        for p in points:
            x, y = at(p)
            half = chart.MARKER_POINTS / 2
            assert not chart._boxes_overlap(a, (x - half, y - half, x + half, y + half))
