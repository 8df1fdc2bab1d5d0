"""What `advise` refuses before it simulates anything: exit 2, naming the flag, the value, what
is allowed; never a traceback."""

from __future__ import annotations

import json

import pytest

from hyperpod_dpd.cli import main

SEEDS = ["--isl", "4096", "--osl", "256", "--no-chart"]


def _run(argv, capsys):
    code = main(["advise", *argv])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _trace(tmp_path, lines):
    path = tmp_path / "trace.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--instance-type", "ml.g6e.48xlarge", *SEEDS], "--instance-type 'ml.g6e.48xlarge'"),
        (["--instance-type", "ml.p6-b300.48xlarge", *SEEDS], "ml.p5.48xlarge (h100_sxm)"),
        (["--model", "qwen2.5-72b", *SEEDS], "llama-3.3-70b, llama-3.1-8b, llama-3.1-405b"),
        (["--model", "/tmp/config.json", *SEEDS], "--model '/tmp/config.json'"),
        (["--isl", "0", "--osl", "256", "--no-chart"], "--isl 0"),
        (["--isl", "4096", "--no-chart"], "--isl and --osl"),
        (["--isl", "130000", "--osl", "2000", "--no-chart"], "the context of llama-3.3-70b (131072)"),
        (["--stack", "dev", "--isl", "16000", "--osl", "1000", "--no-chart"], "endpoint.maxModelLen (16384)"),
        ([*SEEDS, "--ttft-ms", "0"], "--ttft-ms 0"),
        ([*SEEDS, "--tpot-ms", "-5"], "--tpot-ms -5"),
        ([*SEEDS, "--concurrency", "0"], "--concurrency 0"),
        ([*SEEDS, "--concurrency", "8", "--rps", "2"], "--concurrency with --rps"),
        ([*SEEDS, "--max-nodes", "0"], "--max-nodes 0"),
        ([*SEEDS, "--write"], "--write without --stack"),
        (["--stack", "canary", *SEEDS], "--endpoint"),
    ],
)  # fmt: skip
def test_refused_with_the_flag_named(argv, named, capsys):
    code, out = _run(argv, capsys)
    assert code == 2, out
    assert named in out
    assert "Traceback" not in out


@pytest.mark.parametrize(
    ("lines", "named"),
    [
        (["not json"], "line 1 is not JSON"),
        (['{"input_tokens": 4096, "output_tokens": 0}'], "both must be whole numbers above 0"),
        (['{"input_tokens": -3, "output_tokens": 10}'], "both must be whole numbers above 0"),
        (['{"prompt": "hello"}'], "holds no input/output token counts"),
        (['{"input_tokens": 200000, "output_tokens": 10}'], "above the context"),
    ],
)
def test_a_bad_trace_is_refused_naming_the_line(lines, named, tmp_path, capsys):
    code, out = _run(["--trace", _trace(tmp_path, lines), "--no-chart"], capsys)
    assert code == 2, out
    assert "--trace" in out
    assert named in out.replace("above the context of", "above the context")


def test_a_trace_reads_the_benchmarks_own_records(tmp_path):
    """aiperf's per-request records (what a benchmark run leaves) are a trace as they are."""
    from hyperpod_dpd.advise.workload import read_trace

    record = {"metrics": {"input_sequence_length": {"value": 4096, "unit": "tokens"},
                          "output_sequence_length": {"value": 256, "unit": "tokens"}}}  # fmt: skip
    path = tmp_path / "profile_export.jsonl"
    path.write_text(
        json.dumps(record) + "\n" + json.dumps({"input_length": 10, "output_length": 5})
    )
    assert read_trace(path) == [(4096, 256), (10, 5)]


@pytest.mark.long
def test_the_endpoint_hint_followed_once_advises(capsys):
    """A stack of several endpoints: the refusal names one, and adding it advises (exit 0)."""
    small = ["--isl", "256", "--osl", "256", "--concurrency", "2", "--max-nodes", "1",
             "--no-chart", "--format", "json"]  # fmt: skip
    code, out = _run(["--stack", "canary", *small], capsys)
    assert code == 2
    hinted = out.rsplit("e.g. ", 1)[1].split()
    assert hinted[0] == "--endpoint"
    code, out = _run(["--stack", "canary", *small, *hinted[:2]], capsys)
    assert code == 0, out
