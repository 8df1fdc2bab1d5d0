"""`benchmark run` for real: aiperf against a local streaming server whose timings are known."""

from __future__ import annotations

import pytest

from tests.hyperpod_dpd.benchmark.conftest import (
    FIRST_MS,
    IN,
    OUT,
    PER_TOKEN_MS,
    SCENARIO,
    TPOT_MS,
    TRANSFER_MS,
    results_of,
)

TTFT_MS = FIRST_MS + PER_TOKEN_MS * IN + TRANSFER_MS  # 507.2 ms


# Serial with the other aiperf tests (one worker): two load generators at once on two cores
# would measure each other.
@pytest.mark.long
@pytest.mark.xdist_group("aiperf")
def test_measured_ttft_and_tpot_are_what_the_server_was_set_to(measured_runs):
    results = results_of(measured_runs.dpd)
    assert results["scenario"] == SCENARIO and results["label"] == "dpd"
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
