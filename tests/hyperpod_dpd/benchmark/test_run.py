"""`benchmark run` for real: aiperf against a local streaming server whose timings are known (the
session's demo run, tests/hyperpod_dpd/conftest.py: the demo's DPD fake server)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from hyperpod_dpd.benchmark import loadgen
from hyperpod_dpd.benchmark.fake_timings import Timings, add_arguments, timings_of
from hyperpod_dpd.benchmark.loadgen import LoadRun, aiperf_argv
from hyperpod_dpd.benchmark.run import tokenizer_dir
from hyperpod_dpd.benchmark.scenario import Scenario, StopRule, parse_scenario
from hyperpod_dpd.demo.command import SCENARIO, SERVERS
from tests.hyperpod_dpd.benchmark.conftest import WORD_TOKENIZER, results_of
from tests.hyperpod_dpd.demo.runs import MEASURED


def _timings(flags: tuple[str, ...]) -> Timings:
    """The timings a fake server started with `flags` serves (its defaults for the rest)."""
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return timings_of(parser.parse_args(list(flags)))


# Serial with the other aiperf tests (one worker): two load generators at once on two cores
# would measure each other.
@pytest.mark.long
@pytest.mark.xdist_group("aiperf")
def test_measured_ttft_and_tpot_are_what_the_server_was_set_to(demo_run):
    results = results_of(demo_run.measured() / "dpd")
    timings, scenario = _timings(dict(SERVERS)["dpd"]), parse_scenario(SCENARIO)
    inputs, outputs = scenario.input_tokens, scenario.output_tokens
    ttft = timings.ttft_ms(inputs)  # 507.2 ms
    assert results["scenario"] == SCENARIO and results["label"] == "dpd"
    assert results["model"] == "fake-llm" and results["loadGenerator"]["name"] == "aiperf"
    concurrency = int(MEASURED[MEASURED.index("--concurrency") + 1])
    r = results["levels"][str(concurrency)]
    assert r["errors"] == 0 and r["requests"] >= 3
    assert r["inputTokens"] == inputs and r["outputTokens"] == outputs
    assert r["ttft"]["p50"] == pytest.approx(ttft, rel=0.10)
    assert r["tpot"]["p50"] == pytest.approx(timings.tpot_ms, rel=0.10)
    assert r["itl"]["p50"] == pytest.approx(timings.tpot_ms, rel=0.10)
    e2e = ttft + (outputs - 1) * timings.tpot_ms
    assert r["e2e"]["p50"] == pytest.approx(e2e, rel=0.10)
    assert r["ttft"]["p50"] <= r["ttft"]["p95"] <= r["ttft"]["p99"]
    # N streams at once deliver about N times the tokens of one (a stream's tokens per second
    # being its output tokens over its requests' mean latency).
    one_stream = outputs / (r["e2e"]["mean"] / 1000)
    streams = r["outputTokensPerSecond"] / one_stream
    assert 0.62 * concurrency < streams < 1.07 * concurrency, streams
    assert results["clientCpuSeconds"] > 0
    # A run of one level: aiperf started after the tokenizer's code (loadgen.PRELOAD), and its
    # log is aiperf's alone, without transformers' advice from that import.
    assert "PyTorch was not found" not in (demo_run.measured() / "dpd" / "aiperf.log").read_text()


def test_a_tokenizer_json_hands_aiperf_its_directory(monkeypatch):
    """`--tokenizer DIR/tokenizer.json` runs as `--tokenizer DIR` does (the demo's run): aiperf
    gets the same absolute directory, as it loads a local tokenizer from one."""
    monkeypatch.chdir(WORD_TOKENIZER.parents[2])
    relative = WORD_TOKENIZER.relative_to(WORD_TOKENIZER.parents[2])
    given = tokenizer_dir(relative / "tokenizer.json")
    assert given == tokenizer_dir(relative) == WORD_TOKENIZER.resolve()
    load = LoadRun("http://x", given, "m", Scenario(8, 2), [1], StopRule(requests=1), Path("a"))
    argv = aiperf_argv(load, Path("venv"))
    assert argv[argv.index("--tokenizer") + 1] == str(WORD_TOKENIZER.resolve())


def test_an_interrupt_as_aiperf_starts_stops_it(monkeypatch, tmp_path):
    """Ctrl-C after aiperf started, before its output is read (the progress being set up):
    aiperf and its group are stopped, not left loading the endpoint."""
    started = []
    real_start = loadgen.children.start

    def start(_argv, **popen):  # a process that would run on, in aiperf's place
        started.append(real_start(["sleep", "60"], **popen))
        return started[-1]

    def interrupted(*_args, **_kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(loadgen.children, "start", start)
    monkeypatch.setattr(loadgen, "Progress", interrupted)
    load = LoadRun("http://x", WORD_TOKENIZER, "m", Scenario(8, 2), [1], StopRule(requests=1),
                   tmp_path / "a")  # fmt: skip
    monkeypatch.setattr(loadgen, "AIPERF_GRACE_SECONDS", 0.1)
    with pytest.raises(KeyboardInterrupt):
        loadgen.run_aiperf(load, tmp_path / "venv", tmp_path / "aiperf.log")
    (proc,) = started
    assert proc.poll() is not None
