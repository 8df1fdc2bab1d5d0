"""`benchmark compare` on two real runs (the session's demo run, tests/hyperpod_dpd/conftest.py):
an endpoint whose decode slows while a prompt prefills (colocated) against one whose decode
never waits but whose first token waits for the KV transfer (disaggregated)."""

from __future__ import annotations

import struct

import pytest

from hyperpod_dpd.benchmark.compare import improvement, report_md
from tests.hyperpod_dpd.demo.runs import MEASURED


def _png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path.name} is not a PNG"
    width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk
    return width, height


@pytest.mark.long
@pytest.mark.xdist_group("aiperf")
def test_dpd_improves_tpot_not_ttft_and_the_charts_are_drawn(demo_run):
    # The demo's `benchmark compare colocated dpd --out report`, as a user runs it.
    report_dir = demo_run.measured() / "report"
    report = (report_dir / "report.md").read_text()
    level = MEASURED[MEASURED.index("--concurrency") + 1]
    section = report.split(f"## Concurrency {level}\n")[1].split("##")[0]
    rows = {line.split(" | ")[0].strip("| "): line for line in section.splitlines()
            if line.startswith("| ")}  # fmt: skip
    tpot = float(rows["TPOT p50"].rstrip(" |").rsplit("| ", 1)[1].rstrip("%"))
    ttft = float(rows["TTFT p50"].rstrip(" |").rsplit("| ", 1)[1].rstrip("%"))
    assert tpot > 5, f"TPOT improved by {tpot}%"  # decode never waits for a prefill
    assert ttft <= 0, f"TTFT improved by {ttft}%"  # the first token waits for the transfer
    # The recipe's rows, from the GPUs and hourly cost the runs recorded.
    per_gpu = float(rows["output tokens/s per GPU"].rstrip(" |").rsplit("| ", 1)[1].rstrip("%"))
    cost = float(rows["USD per 1M output tokens"].rstrip(" |").rsplit("| ", 1)[1].rstrip("%"))
    # Same GPUs and price on both: per GPU +p% is p / (1 + p) fewer dollars per token.
    assert per_gpu > 0 and cost == pytest.approx(per_gpu / (1 + per_gpu / 100), abs=0.15)
    assert rows["error rate"].endswith("| 0.00% | 0.00% | +0.00 pp |")
    for name in ("improvement-dpd.png", "latency-percentiles.png"):
        path = report_dir / name
        assert f"]({name})" in report
        width, height = _png_size(path)
        assert width >= 600 and height >= 300 and path.stat().st_size > 15_000, name


def test_improvement_sign_conventions():
    assert improvement(100.0, 70.0, "tpot") == pytest.approx(30.0)  # less latency: better
    assert improvement(100.0, 110.0, "ttft") == pytest.approx(-10.0)
    assert improvement(100.0, 135.0, "outputTokensPerSecond") == pytest.approx(35.0)
    assert improvement(0.0, 5.0, "e2e") is None


def _results(label, ttft, tpot, tokens_per_s, endpoint=None):
    level = {
        m: {"mean": v, "p50": v, "p95": v * 1.2, "p99": v * 1.5}
        for m, v in (("ttft", ttft), ("tpot", tpot), ("itl", tpot), ("e2e", ttft + 31 * tpot))
    }
    level |= {"outputTokensPerSecond": tokens_per_s, "requestsPerSecond": tokens_per_s / 32,
              "requests": 100, "errors": 0}  # fmt: skip
    return {"label": label, "scenario": "D(4096,256)", "endpoint": endpoint,
            "levels": {"8": level, "16": level}}  # fmt: skip


def test_report_states_the_convention_and_three_runs_compare_to_the_first():
    runs = [
        _results("colocated", 300, 40, 800, {"mode": "colocated", "hourlyCostUsd": 200.0}),
        _results("chunked", 350, 30, 900),
        _results("dpd", 320, 20, 1000, {"mode": "dpd", "replicas": "1/1", "hourlyCostUsd": 200.0}),
    ]
    text = report_md(runs, ["improvement-dpd.png"])
    assert "positive is better" in text
    row = next(line for line in text.splitlines() if line.startswith("| TPOT p50 |"))
    assert row.endswith("| +25.0% | +50.0% |")  # chunked, dpd against colocated
    row = next(line for line in text.splitlines() if line.startswith("| output tokens/s |"))
    assert row.endswith("| +12.5% | +25.0% |")
    assert "| dpd | D(4096,256) | dpd | 1/1 |" in text
    # $200/h over 800 and 1000 tokens/s; the run without a cost has none.
    row = next(line for line in text.splitlines() if line.startswith("| USD per 1M output tokens"))
    assert row == "| USD per 1M output tokens | $69.44 | n/a | $55.56 | n/a | +20.0% |"
    assert text.count("## Concurrency") == 2
    assert text.index("## Concurrency 8") < text.index("## Concurrency 16")  # as numbers


def test_a_level_only_one_run_measured_gets_no_section():
    """A sweep (1 and 16) against a run at 16 alone: only 16 is compared."""
    swept = _results("dpd", 320, 20, 1000)
    swept["levels"] = {"1": swept["levels"]["8"], "16": swept["levels"]["16"]}
    alone = _results("colocated", 300, 40, 800)
    alone["levels"] = {"16": alone["levels"]["16"]}
    text = report_md([alone, swept], [])
    assert "## Concurrency 16\n" in text and "## Concurrency 1\n" not in text
    assert text.count("## Concurrency") == 1


def test_the_recipe_rows_error_rate_tokens_per_gpu_and_cost():
    """A canary's comparison of baseline and candidate: TTFT/ITL/E2E percentiles, error rate,
    output tokens/s per GPU and the cost per 1M output tokens, each against BASE."""
    from hyperpod_dpd.benchmark.compare import chart_data

    baseline = _results("baseline", 300, 40, 800, {"mode": "colocated", "gpus": 16,
                                                   "hourlyCostUsd": 110.08})  # fmt: skip
    candidate = _results("candidate", 320, 20, 1000, {"mode": "dpd", "gpus": 16,
                                                      "hourlyCostUsd": 110.08})  # fmt: skip
    candidate["levels"]["8"] = {**candidate["levels"]["8"], "requests": 98, "errors": 2}
    text = report_md([baseline, candidate], [])
    for metric in ("TTFT p50", "TTFT p95", "TTFT p99", "ITL p50", "ITL p95", "ITL p99",
                   "E2E latency p50", "E2E latency p99"):  # fmt: skip
        assert f"| {metric} |" in text, metric
    assert "| baseline | D(4096,256) | colocated | n/a | n/a | 16 |" in text
    section = text.split("## Concurrency 8")[1].split("##")[0]
    lines = {line.split(" | ")[0].strip("| "): line for line in section.splitlines()}
    assert lines["output tokens/s per GPU"] == "| output tokens/s per GPU | 50.0 | 62.5 | +25.0% |"
    assert (
        lines["USD per 1M output tokens"]
        == "| USD per 1M output tokens | $38.22 | $30.58 | +20.0% |"
    )
    assert lines["error rate"] == "| error rate | 0.00% | 2.00% | -2.00 pp |"
    data = chart_data([baseline, candidate])
    bars = data["improvements"]["candidate"]
    assert bars["output tokens/s per GPU"] == [pytest.approx(25.0)] * 2
    assert bars["USD per 1M output tokens"] == [pytest.approx(20.0)] * 2
    # Every chart's title names the workload it measured (plots.py _workload).
    assert data["scenario"] == baseline["scenario"]
    # Runs that recorded no GPUs and no cost: no such rows or bars, never a made-up number.
    bare = [_results("a", 300, 40, 800), _results("b", 320, 20, 1000)]
    assert "per GPU" not in report_md(
        bare, []
    ) and "| error rate | 0.00% | 0.00% | +0.00 pp |" in report_md(bare, [])
    assert "output tokens/s per GPU" not in chart_data(bare)["improvements"]["b"]
