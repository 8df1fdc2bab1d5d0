"""The search for the load one replica holds within the SLO (hyperpod_dpd/advise/capacity.py),
against a model of a simulator whose numbers are known: it finds the load where the SLO stops
holding, a tighter SLO never finds more (for any latency curve, monotone or not), a target never
reaches what an overloaded replica reads, and each prediction config is simulated once.

The real simulator on one layout: tests/hyperpod_dpd/advise/test_targets_from_slo.py."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hyperpod_dpd.advise import capacity as cap
from hyperpod_dpd.advise.search import Layout
from hyperpod_dpd.advise.targets import target
from hyperpod_dpd.advise.workload import workload

# --- the search itself, for any curve -----------------------------------------------------

curves = st.lists(st.floats(min_value=1, max_value=1000), min_size=64, max_size=64)


def _latency(curve: list[float]):
    """A latency at each load 1..64 (whole loads) or its floor (rates)."""
    return lambda load: curve[min(63, max(0, math.floor(load) - 1))]


@settings(max_examples=300, deadline=None)
@given(curve=curves, slos=st.tuples(st.floats(1, 1000), st.floats(1, 1000)),
       whole=st.booleans())  # fmt: skip
def test_a_tighter_slo_never_finds_more_whatever_the_curve(curve, slos, whole):
    tight, loose = sorted(slos)
    latency = _latency(curve)
    grid = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]

    def found(slo):
        lo, _ = cap.highest_meeting(lambda x: latency(x) <= slo, grid, whole)
        return -1 if lo is None else lo

    assert found(tight) <= found(loose)


@settings(max_examples=200, deadline=None)
@given(threshold=st.integers(1, 70))
def test_on_a_monotone_curve_it_finds_the_last_load_that_holds(threshold):
    meets = lambda c: c <= threshold  # noqa: E731
    lo, hi = cap.highest_meeting(meets, [float(c) for c in cap.powers_up_to(64)], whole=True)
    if threshold >= 64:
        assert (lo, hi) == (64, None)  # every load tried holds: at least 64
    else:
        assert (lo, hi) == (threshold, threshold + 1)


def test_rates_are_halved_to_five_percent():
    lo, hi = cap.highest_meeting(lambda r: r <= 3.3, cap.doubling(0.5, 6), whole=False)
    assert lo <= 3.3 < hi and hi - lo <= cap.RATE_PRECISION * lo


@pytest.mark.parametrize(("value", "digits", "want"),
                         [(18437.2, 3, 18400), (29.999, 2, 29), (26.67, 2, 26), (0.987, 3, 0.987)])  # fmt: skip
def test_round_down_never_rounds_up(value, digits, want):
    assert cap.round_down(value, digits) == want <= value


# --- against a model simulator ------------------------------------------------------------


class Model:
    """A simulator with known numbers: a prefiller serves SERVICE_MS per prompt (M/D/1 queue:
    TTFT grows as rho / (1 - rho)), saturating at 1000 / SERVICE_MS requests/s; a decoder's TPOT
    is BASE_TPOT + SLOPE x requests in flight. Counts the configs it is asked."""

    SERVICE_MS, BASE_TPOT, SLOPE = 200.0, 10.0, 0.2

    def __init__(self):
        self.asked = 0

    def summary(self, config):
        engine, load = config["engine"], config["traffic"]["load"]
        isl = config["traffic"]["source"]["input_tokens"]
        osl = config["traffic"]["source"]["output_tokens"]
        saturation = 1000 / self.SERVICE_MS
        if load["type"] == "poisson":
            rps = load["requests_per_second"]
            rho = min(rps / saturation, 0.999)
            ttft = self.SERVICE_MS * (1 + rho / (2 * (1 - rho)))
            served, in_flight = min(rps, saturation), 1
        else:
            in_flight = load["concurrency"]
            ttft, served = self.SERVICE_MS, 1.0
        if engine["mode"] == "aggregated":
            ttft *= 1 + in_flight / 8  # colocated: decode steps slow the prefills too
        tpot = self.BASE_TPOT + self.SLOPE * in_flight
        e2e = ttft + osl * tpot
        return {"median_ttft_ms": ttft, "mean_ttft_ms": ttft, "median_tpot_ms": tpot,
                "mean_e2e_latency_ms": e2e, "median_e2e_latency_ms": e2e,
                "input_throughput_tok_s": served * isl, "request_throughput_rps": served,
                "output_throughput_tok_s": served * osl}  # fmt: skip

    def simulate(self, configs):
        self.asked += len(configs)
        return {"engine": {"name": "model", "version": "1"},
                "results": [{"id": c["id"], "summary": self.summary(c["config"])}
                            for c in configs]}  # fmt: skip


def _probe(ttft=None, tpot=None, decode_seqs=32):
    w = workload(4096, 256, None, [8, 16], None, ttft, tpot, 131072, "the context")
    t = target("ml.p5.48xlarge", "llama-3.3-70b")
    return cap.Probe(t, w, {"prefill": 16, "decode": decode_seqs, "colocated": 32})


DPD = Layout("dpd", 1, 8, 2, 8)


def test_the_prefill_target_is_the_rate_where_the_ttft_slo_stops_holding():
    """M/D/1 at 200 ms: TTFT 500 ms at rho = 0.75, 3.75 requests/s, 15,360 prompt tokens/s."""
    model = Model()
    found = cap.capacities(_probe(ttft=500), DPD, cap.Runs(model.simulate))
    prefill = found["prefill"]
    assert prefill.metric == "prompt-tokens-per-second" and prefill.limit == "TTFT p50 <= 500 ms"
    assert 0.95 * 3.75 <= prefill.requests_per_second <= 3.75
    assert prefill.capacity == cap.round_down(prefill.requests_per_second * 4096)
    assert prefill.target == prefill.capacity  # far below saturation (20,480 / 1.2)


def test_a_target_stays_below_what_an_overloaded_replica_reads():
    """A loose TTFT SLO holds almost to saturation: the target stops at saturation / 1.2, where
    an overloaded prefiller still reads more than 10% above it."""
    model = Model()
    prefill = cap.capacities(_probe(ttft=5000), DPD, cap.Runs(model.simulate))["prefill"]
    saturation = 1000 / Model.SERVICE_MS * 4096
    assert prefill.saturation == saturation
    assert prefill.capacity > saturation / cap.SATURATION
    assert prefill.target == cap.round_down(saturation / cap.SATURATION)
    decode = cap.capacities(_probe(tpot=100), DPD, cap.Runs(model.simulate))["decode"]
    assert decode.capacity is not None and decode.target <= 32 / cap.SATURATION  # --max-num-seqs


def test_the_decode_target_counts_only_the_requests_past_their_first_token():
    """TPOT 10 + 0.2 c: 15 ms holds up to 25 in flight; of those, the share past the first token
    (Little's law over the loop) runs on the decoder."""
    model = Model()
    decode = cap.capacities(_probe(tpot=15), DPD, cap.Runs(model.simulate))["decode"]
    share = min((256 * (10 + 0.2 * c)) / (200 + 256 * (10 + 0.2 * c)) for c in cap.powers_up_to(32))
    assert decode.metric == "running-requests"
    assert decode.capacity == cap.round_down(25 * share, 2)


@pytest.mark.parametrize("layout", [DPD, Layout("colocated", 2, 8)])
def test_for_one_layout_a_tighter_slo_never_raises_a_target(layout):
    model = Model()
    runs = cap.Runs(model.simulate)
    slos = [(300, 11), (400, 13), (600, 15), (1000, 18), (3000, 30)]  # tightest first
    targets = []
    for ttft, tpot in slos:
        found = cap.capacities(_probe(ttft, tpot), layout, runs)
        targets.append({pool: c.target or 0 for pool, c in found.items()})
    for tighter, looser in itertools.pairwise(targets):
        assert all(tighter[pool] <= looser[pool] for pool in tighter), targets
    assert targets[0] != targets[-1]  # the SLOs do move the targets


def test_each_prediction_is_simulated_once_and_few_are_needed():
    """A search asks the model a few configs (a grid and a halving); the same SLO again asks
    nothing new, another SLO only its own halving."""
    model = Model()
    runs = cap.Runs(model.simulate)
    cap.capacities(_probe(500, 15), DPD, runs)
    first = model.asked
    assert first == runs.count <= 30
    cap.capacities(_probe(500, 15), DPD, runs)
    assert model.asked == first
    cap.capacities(_probe(600, 16), DPD, runs)
    assert model.asked - first <= 12


def test_an_slo_no_load_holds_gives_no_target_and_says_why():
    found = cap.capacities(_probe(ttft=100, tpot=5), DPD, cap.Runs(Model().simulate))
    assert found["prefill"].target is None
    assert found["prefill"].why == "one request alone takes 200 ms to its first token"
    assert found["decode"].target is None and "decodes at" in found["decode"].why
