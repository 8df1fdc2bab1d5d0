"""`benchmark run` for real: aiperf against a local streaming server whose timings are known."""

from __future__ import annotations

import pytest

from hyperpod_dpd.cli import main
from tests.hyperpod_dpd.benchmark.conftest import results_of

# Time to first token = FIRST + PER_TOKEN x prompt tokens; every later token TPOT after the last.
# A prefill of realistic size (a 70B model's TTFT for 1k tokens is a few hundred ms) keeps the
# client's and server's own few ms per request, on 2 shared cores, well inside 10%.
FIRST_MS, PER_TOKEN_MS, TPOT_MS = 100.0, 0.3, 20.0
IN, OUT = 1024, 32
TTFT_MS = FIRST_MS + PER_TOKEN_MS * IN  # 407.2 ms


# Serial with the other aiperf test (one worker): two load generators at once on two cores
# would measure each other.
@pytest.mark.long
@pytest.mark.xdist_group("aiperf")
def test_measured_ttft_and_tpot_are_what_the_server_was_set_to(fake_server, tokenizer, tmp_path):
    server = fake_server(first_token_ms=FIRST_MS, prefill_ms_per_token=PER_TOKEN_MS,
                         tpot_ms=TPOT_MS)  # fmt: skip
    out = tmp_path / "run"
    code = main([
        "benchmark", "run", "--target", server.url, "--tokenizer", str(tokenizer),
        "--scenario", f"D({IN},{OUT})", "--concurrency", "1,16", "--duration", "4",
        "--out", str(out), "--label", "fake",
    ])  # fmt: skip
    assert code == 0
    results = results_of(out)
    assert results["scenario"] == f"D({IN},{OUT})" and results["label"] == "fake"
    assert results["model"] == "fake-llm" and results["loadGenerator"]["name"] == "aiperf"
    for level in ("1", "16"):
        r = results["levels"][level]
        assert r["errors"] == 0 and r["requests"] >= 3
        assert r["inputTokens"] == IN and r["outputTokens"] == OUT
        assert r["ttft"]["p50"] == pytest.approx(TTFT_MS, rel=0.10), level
        assert r["tpot"]["p50"] == pytest.approx(TPOT_MS, rel=0.10), level
        assert r["itl"]["p50"] == pytest.approx(TPOT_MS, rel=0.10), level
        e2e = TTFT_MS + (OUT - 1) * TPOT_MS
        assert r["e2e"]["p50"] == pytest.approx(e2e, rel=0.10), level
        assert r["ttft"]["p50"] <= r["ttft"]["p95"] <= r["ttft"]["p99"]
    # 16 streams at once deliver about 16x the tokens of one.
    ratio = (
        results["levels"]["16"]["outputTokensPerSecond"]
        / results["levels"]["1"]["outputTokensPerSecond"]
    )
    assert 10 < ratio < 17
    assert results["clientCpuSeconds"] > 0
