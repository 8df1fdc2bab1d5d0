"""Autoscaling targets from the SLO with the real simulator (aisimulate in build/advise-venv), on one
layout: 1P1D TP8/TP8 of Llama 3.3 70B on ml.p5.48xlarge, the AWS benchmark's 4096 in / 256 out. A
tighter SLO never raises a target; the targets are in vLLM's own signals, below what an
overloaded replica reads; the searches reuse their runs (one simulator process, each config
once)."""

from __future__ import annotations

import itertools

import pytest

from core.vllm.scaling_signals import SIGNALS
from hyperpod_dpd.advise import capacity as cap
from hyperpod_dpd.advise import engine
from hyperpod_dpd.advise.search import Layout
from hyperpod_dpd.advise.targets import target
from hyperpod_dpd.advise.workload import workload

pytestmark = pytest.mark.long

LAYOUT = Layout("dpd", 1, 8, 1, 8)
SLOS = [(400, 11.0), (1000, 12.0), (3000, 15.0)]  # TTFT, TPOT p50 in ms: tightest first
SEQUENCES = {"prefill": 16, "decode": 32, "colocated": 32}


@pytest.fixture(scope="module")
def searched():
    t = target("ml.p5.48xlarge", "llama-3.3-70b")
    found, counts = [], []
    with engine.Session() as simulator:
        runs = cap.Runs(simulator.simulate)
        for ttft, tpot in SLOS:
            w = workload(4096, 256, None, [8, 16, 32], None, ttft, tpot, 16384, "maxModelLen")
            found.append(cap.capacities(cap.Probe(t, w, SEQUENCES), LAYOUT, runs))
            counts.append(runs.count)
    return found, counts


def test_for_one_layout_a_tighter_slo_never_raises_a_target(searched):
    found, _ = searched
    for pool in ("prefill", "decode"):
        targets = [f[pool].target or 0 for f in found]
        assert targets == sorted(targets), (pool, targets)
        assert targets[0] < targets[-1], (pool, targets)  # the SLO moves it


def test_the_targets_are_in_vllms_signals_below_an_overloaded_replicas_reading(searched):
    found, _ = searched
    for f in found:
        prefill, decode = f["prefill"], f["decode"]
        assert prefill.metric == "prompt-tokens-per-second" and decode.metric == "running-requests"
        assert {prefill.metric, decode.metric} <= set(SIGNALS)
        assert prefill.target <= prefill.saturation / cap.SATURATION
        assert decode.target <= SEQUENCES["decode"] / cap.SATURATION
    # One prefiller saturates near 5.7 requests/s of 4096 tokens (aisimulate, H100): a 3 s TTFT
    # holds close to it, and the capacity is never past it (a minute's queue just beyond keeps
    # its median in, but grows without end).
    saturation = found[-1]["prefill"].saturation
    assert 20_000 < saturation < 26_000
    assert 0.8 * saturation < found[-1]["prefill"].capacity <= saturation


def test_the_searches_reuse_their_runs(searched):
    """The first SLO pays for the grids; each further one only for its own halving."""
    _, counts = searched
    assert counts[0] <= 25
    assert all(later - earlier <= 12 for earlier, later in itertools.pairwise(counts))
