"""Bad `benchmark` command lines exit 2 naming the flag, before anything runs."""

from __future__ import annotations

import json

import pytest

from hyperpod_dpd.benchmark import results
from hyperpod_dpd.cli import main
from tests.conftest import ROOT


@pytest.fixture
def tk(tmp_path):
    d = tmp_path / "tk"
    d.mkdir()
    (d / "tokenizer.json").write_text("{}")
    return d


def _run(tmp_path, *extra: str, tokenizer=None) -> list[str]:
    argv = ["benchmark", "run", "--out", str(tmp_path / "out")]
    if tokenizer is not None:
        argv += ["--tokenizer", str(tokenizer)]
    return argv + list(extra)


@pytest.mark.parametrize(
    ("extra", "names"),
    [
        (["--target", "localhost:8000"], "--target: got 'localhost:8000'"),
        # URLs urllib cannot open: refused here, not once the run has begun.
        (["--target", "http://[::1"], "--target: got 'http://[::1'"),
        (["--target", "http://localhost:port"], "--target: got 'http://localhost:port'"),
        (["--target", "https://:8000"], "--target: got 'https://:8000'"),
        (["--target", "http://x", "--scenario", "4096,256"], "--scenario: got '4096,256'"),
        (["--target", "http://x", "--scenario", "D(0,256)"], "input tokens between 1"),
        (["--target", "http://x", "--concurrency", "8,x"], "--concurrency: got '8,x'"),
        (["--target", "http://x", "--concurrency", "8,8"], "drop the second 8"),
        (["--target", "http://x", "--requests", "0"], "--requests: got 0"),
        (["--target", "http://x", "--duration", "-1"], "--duration: got -1"),
        # In the cluster, the Job reads the staged checkpoint's tokenizer: a local one is a mistake.
        (["--stack", "dev"], "--tokenizer"),
        ([], "--target: say where the endpoint is"),
    ],
)
def test_bad_flags_exit_2_naming_the_flag(tmp_path, tk, capsys, extra, names):
    assert main(_run(tmp_path, *extra, tokenizer=tk)) == 2
    err = capsys.readouterr().err
    assert names in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()  # nothing started, nothing written


def test_a_tokenizer_that_is_not_one_is_refused(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    for path in (None, tmp_path / "missing", tmp_path / "empty"):
        assert main(_run(tmp_path, "--target", "http://x", tokenizer=path)) == 2
        assert "--tokenizer" in capsys.readouterr().err


def test_an_earlier_run_is_never_overwritten(tmp_path, tk, capsys):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "results.json").write_text("{}")
    assert main(_run(tmp_path, "--target", "http://x", tokenizer=tk)) == 2
    assert "never overwritten" in capsys.readouterr().err
    assert (tmp_path / "out" / "results.json").read_text() == "{}"


def test_compare_refuses_what_is_not_a_run(tmp_path, capsys):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "results.json").write_text(json.dumps({"schema": "other"}))
    code = main(["benchmark", "compare", str(tmp_path / "a"), str(tmp_path / "b"),
                 "--out", str(tmp_path / "r")])  # fmt: skip
    assert code == 2
    assert "not a results.json of `hyperpod-dpd benchmark run`" in capsys.readouterr().err
    assert main(["benchmark", "compare", str(tmp_path / "a"), "--out", str(tmp_path / "r")]) == 2


def test_compare_needs_a_shared_level(tmp_path, capsys):
    for name, level in (("a", "8"), ("b", "16")):
        (tmp_path / name).mkdir()
        level_data = {m: {"mean": 1, "p50": 1, "p95": 1, "p99": 1} for m in results.LATENCIES}
        level_data |= {"outputTokensPerSecond": 1, "requestsPerSecond": 1, "errors": 0}
        results.write(tmp_path / name / "results.json", {
            "schema": results.SCHEMA, "label": name, "scenario": "D(1,1)",
            "levels": {level: level_data},
        })  # fmt: skip
    code = main(["benchmark", "compare", str(tmp_path / "a"), str(tmp_path / "b"),
                 "--out", str(tmp_path / "r")])  # fmt: skip
    assert code == 2
    assert "share no concurrency level" in capsys.readouterr().err


def test_a_stack_records_the_endpoint_a_comparison_needs(tmp_path):
    from hyperpod_dpd.benchmark.run import stack_settings
    from tests.conftest import ROOT, edit, stack_raw, write_project

    def endpoint_facts(project, stack):
        from hyperpod_dpd.benchmark.run import endpoint_facts

        return endpoint_facts(stack_settings(project, stack), stack)

    dev = endpoint_facts(ROOT, "dev")
    assert dev["mode"] == "dpd" and dev["replicas"] == "1/1"
    assert dev["tensorParallelSize"] == 8 and dev["routingThreshold"] == 4096
    assert dev["pdBufferSize"] == 8 * 2**30 and dev["hourlyCostUsd"] > 100
    raw = edit(stack_raw("dev"), "hyperpod-dpd:endpoint.mode", "colocated")
    edit(raw, "hyperpod-dpd:endpoint.colocated", {"maxNumBatchedTokens": 2048})
    project = write_project(tmp_path, raw, stack="tuned")
    tuned = endpoint_facts(project, "tuned")
    assert tuned["mode"] == "colocated" and tuned["replicas"] == "2"
    assert tuned["chunkedPrefill"] == "--max-num-batched-tokens 2048"
    assert "routingThreshold" not in tuned


def test_a_cost_that_is_not_one_is_refused(tmp_path, tk, capsys):
    assert main(_run(tmp_path, "--target", "http://x", "--hourly-cost", "0", tokenizer=tk)) == 2
    assert "--hourly-cost: got 0.0" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "names"),
    [
        (["--timeout", "0.5"], "--timeout: got 0.5; allowed: minutes >= 1"),
        (["--poll-interval", "-1"], "--poll-interval: got -1.0; allowed: seconds > 0"),
        (["--concurrency", "0"], "--concurrency: got '0'"),
    ],
)
def test_bad_in_cluster_flags_exit_2_before_the_cluster_is_asked(tmp_path, capsys, extra, names):
    from tests.conftest import ROOT

    argv = ["benchmark", "run", "--stack", "dev", "--project-dir", str(ROOT), "--bucket", "b",
            "--out", str(tmp_path / "out"), *extra]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert names in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["run", "compare"])
def test_results_never_land_in_a_source_folder(tmp_path, tk, capsys, command):
    """`--out bench/dpd` once stood in the README: results in the folder of the project's own
    speed measurements. Any package of the project (and docs/) is refused; nothing written."""
    out = ROOT / "bench" / "dpd"
    if command == "run":
        argv = ["benchmark", "run", "--target", "http://x", "--tokenizer", str(tk)]
    else:
        argv = ["benchmark", "compare", str(tmp_path / "a"), str(tmp_path / "b")]
    assert main([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--out" in err and "source folder bench/" in err and "--out results/dpd" in err
    assert not out.exists()
