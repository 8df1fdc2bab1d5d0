"""`advise --measured RUN`: the layout and workload a benchmark run recorded, predicted, beside
what it measured; gaps over 25% flagged with where to look."""

from __future__ import annotations

import json

import pytest

from hyperpod_dpd.cli import main

pytestmark = pytest.mark.long


def _level(ttft, tpot, e2e, tokens):
    def pct(v):
        return {"mean": v, "p50": v, "p95": v, "p99": v}

    return {"ttft": pct(ttft), "tpot": pct(tpot), "itl": pct(tpot), "e2e": pct(e2e),
            "outputTokensPerSecond": tokens, "requestsPerSecond": 1.0, "requests": 100,
            "errors": 0, "inputTokens": 4096, "outputTokens": 256, "durationSeconds": 60}  # fmt: skip


def _run(tmp_path, endpoint, levels):
    run = tmp_path / "dpd"
    run.mkdir()
    data = {"schema": "hyperpod-dpd/benchmark-results/v1", "label": "dpd", "scenario": "D(4096,256)",
            "endpoint": endpoint, "levels": levels}  # fmt: skip
    (run / "results.json").write_text(json.dumps(data))
    return run


def test_predicted_beside_measured_flags_the_gap(tmp_path, capsys):
    # Measured TPOT 30 ms against a 1P1D prediction near 10 ms: flagged; TTFT near it: not.
    run = _run(tmp_path, {"mode": "dpd", "replicas": "1/1", "tensorParallelSize": 8},
               {"8": _level(190, 30.0, 7800, 700)})  # fmt: skip
    assert main(["advise", "--measured", str(run), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["layout"] == "1P1D TP8/TP8"
    rows = {r["metric"]: r for r in doc["levels"][0]["metrics"]}
    assert rows["TPOT p50 ms"]["flagged"] and rows["TPOT p50 ms"]["measured"] == 30.0
    assert not rows["TTFT p50 ms"]["flagged"]
    assert main(["advise", "--measured", str(run)]) == 0
    assert "TPOT p50 ms: the simulator or the deployment is off" in capsys.readouterr().out


def test_a_run_without_its_layout_is_refused(tmp_path, capsys):
    run = _run(tmp_path, None, {"8": _level(190, 10.0, 2800, 700)})
    assert main(["advise", "--measured", str(run)]) == 2
    assert "--measured" in capsys.readouterr().err


def test_benchmark_compare_sets_the_prediction_beside_each_run(tmp_path, capsys):
    """`benchmark compare --predicted`: the report, then each run's layout predicted beside what
    it measured, as `advise --measured` shows it (predicted beside measured)."""
    base = _run(tmp_path, {"mode": "dpd", "replicas": "1/1", "tensorParallelSize": 8},
                {"8": _level(190, 30.0, 7800, 700)})  # fmt: skip
    head = tmp_path / "head"
    head.mkdir()
    (head / "results.json").write_text((base / "results.json").read_text())
    assert main(["benchmark", "compare", str(base), str(head), "--out", str(tmp_path / "r"),
                 "--predicted"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert out.count(": predicted beside measured\n") == 2
    assert "TPOT p50 ms: the simulator or the deployment is off" in out


def test_benchmark_compare_predicted_refuses_a_run_without_its_layout_before_writing(
    tmp_path, capsys
):
    """A run made without --stack cannot be predicted: `compare --predicted` says so with exit 2
    and writes no report (it wrote report.md, then exited 2)."""
    base = _run(tmp_path, None, {"8": _level(190, 30.0, 7800, 700)})
    head = tmp_path / "head"
    head.mkdir()
    (head / "results.json").write_text((base / "results.json").read_text())
    out = tmp_path / "r"
    argv = ["benchmark", "compare", str(base), str(head), "--out", str(out), "--predicted"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--predicted" in err and "without --stack" in err
    assert not (out / "report.md").exists()


# --- the predicted target beside what the run held --------------------------------------

DPD_1P1D = {"mode": "dpd", "replicas": "1/1", "tensorParallelSize": 8}


def _levels():
    """TPOT 11, 13.5 then 16 ms; TTFT 200, 260 then 2600 ms; 2.6, 4.3, 4.7 requests/s."""
    return {"8": _level(200, 11.0, 3000, 665), "16": _level(260, 13.5, 3700, 1100),
            "32": _level(2600, 16.0, 6700, 1203)}  # fmt: skip


def test_what_a_run_held_per_replica_is_read_in_each_targets_unit():
    from hyperpod_dpd.advise import measured
    from hyperpod_dpd.advise.search import Layout

    run = {"levels": _levels()}
    for level, rps in (("8", 2.6), ("16", 4.3), ("32", 4.7)):
        run["levels"][level]["requestsPerSecond"] = rps
    layout = Layout("dpd", 1, 8, 1, 8)
    decode = measured.held(run, layout, "decode", {"tpot": 15.0})
    # Little's law over the loop: 16 in flight, 3.7 s each of which 0.26 s before the first token.
    assert decode["heldUpTo"] == round(16 * (3700 - 260) / 3700, 2)
    assert (decode["atConcurrency"], decode["missedAtConcurrency"]) == (16, 32)
    assert decode["missed"] == "TPOT 16.0 ms"
    prefill = measured.held(run, layout, "prefill", {"ttft": 1000.0})
    assert prefill["heldUpTo"] == 4.3 * 4096 and prefill["missedAt"] == 4.7 * 4096
    # Lower than predicted: set it; higher: keep the prediction; never missed below it: rerun.
    assert measured.suggestion(26, decode, 26.6)[0] == decode["heldUpTo"]
    assert measured.suggestion(10, decode, 26.6)[0] == 10
    never = {**decode, "missedAt": None, "missedAtConcurrency": None}
    target, why = measured.suggestion(26, never, 26.6)
    assert target is None and "rerun at higher concurrency" in why


def test_measured_with_an_slo_sets_the_predicted_target_beside_what_the_run_held(tmp_path, capsys):
    run = _run(tmp_path, DPD_1P1D, _levels())
    argv = ["advise", "--measured", str(run), "--stack", "dev", "--tpot-ms", "15"]
    assert main([*argv, "--format", "json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["targets"]
    assert (row["pool"], row["metric"]) == ("decode", "running-requests")
    assert row["predicted"] > row["measured"]["heldUpTo"]  # the run held less than predicted
    assert row["suggestedTarget"] == pytest.approx(row["measured"]["heldUpTo"], abs=0.1)
    assert row["fix"].startswith(
        "pulumi config set --stack dev --path 'hyperpod-dpd:endpoint.autoscaling.decode.target' "
    )
    assert main(argv) == 0
    assert "autoscaling targets, predicted beside what the run held" in capsys.readouterr().out
