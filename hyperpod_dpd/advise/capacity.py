"""The load one replica of a pool holds within the SLO, searched with the simulator: what an
autoscaling target holds each replica at (hyperpod_dpd/advise/scaling.py turns it into one).

Judged at the percentiles aisimulate predicts that the SLO flags name: the median (p50) TTFT
against --ttft-ms, the median TPOT against --tpot-ms.

- prefill (TTFT): one prefill worker, Poisson arrivals at a rate; the highest rate it serves
  whose median TTFT meets the SLO, in prompt tokens per second (rate x mean input tokens): vLLM's
  `vllm:prompt_tokens` counter as a rate, what the prompt-tokens-per-second signal reads. Decode
  workers enough to be no limit (at most half the simulator's batch filled), so that the
  prefiller's queue alone sets the TTFT.
- decode (TPOT): one decode worker at its --max-num-seqs, requests in flight (a closed loop); the
  most requests whose median TPOT meets the SLO, in requests running on the decoder: those in
  flight times the share of a request's time past its first token (Little's law over the loop:
  the rest are on a prefiller), at the smallest share met on the grid. Prefill workers enough to
  keep the decoder fed.
- colocated (TTFT and TPOT): one worker at its --max-num-seqs, requests in flight; the most whose
  medians meet both: all of them run on the worker (vllm:num_requests_running).

Each search probes an SLO-free grid (rates doubling from half the unloaded service rate;
requests in flight 1, 2, 4, ... up to --max-num-seqs), keeps the longest run of the grid that
meets the SLO, then halves the gap to the next grid point (to 5% of a rate, one request in
flight). The grid is the same for every SLO and the halving deterministic, so a tighter SLO never
finds more (a test holds it, the property by hypothesis and the simulator on one layout).

A target also stays below what an overloaded replica reads (a prefiller's saturated prompt
tokens/s, a decoder's --max-num-seqs) divided by SATURATION: Kubernetes' HPA changes nothing while
the value is within 10% of the target (its default --horizontal-pod-autoscaler-tolerance), so a
target at saturation would never scale an overloaded pool out.

Every run goes through `Runs`, keyed by its prediction config: a search, or another SLO's, asks
the simulator once for each config.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hyperpod_dpd.advise.search import Layout, prediction_config
from hyperpod_dpd.advise.targets import Target
from hyperpod_dpd.advise.workload import Workload

HPA_TOLERANCE = 0.1  # kube-controller-manager --horizontal-pod-autoscaler-tolerance default
SATURATION = 1 + 2 * HPA_TOLERANCE  # an overloaded replica reads at least this x its target
RATE_STEPS = 6  # the rate grid: half the unloaded service rate, doubled 5 times (16x)
RATE_PRECISION = 0.05  # halve a rate gap until it is within 5%
OVERLOAD = 8  # the saturation probe's rate: 8x the unloaded service rate (measured: 2x at most)
SIMULATOR_BATCH = 256  # aisimulate's default max_sequences: the decoders no limit when half full
PERCENTILE = "p50"
SERVED = 0.9  # a rate is held when a minute of it is served (the last decodes' tail aside)

Summary = dict[str, Any]
Simulate = Callable[[list[dict[str, Any]]], dict[str, Any]]


class Runs:
    """Simulator runs by their prediction config: each config is simulated once."""

    def __init__(self, simulate: Simulate) -> None:
        self._simulate = simulate
        self._seen: dict[str, Summary | None] = {}
        self.engine: dict[str, Any] | None = None

    @property
    def count(self) -> int:
        return len(self._seen)

    def summaries(self, configs: list[tuple[str, dict[str, Any]]]) -> list[Summary | None]:
        """The summary of each (label, config), None where the engine refused it; only the
        configs not run before go to the simulator, in one request."""
        keys = [json.dumps(c, sort_keys=True) for _, c in configs]
        new = {k: (label, c) for k, (label, c) in zip(keys, configs, strict=True)
               if k not in self._seen}  # fmt: skip
        if new:
            answer = self._simulate([{"id": k, "label": label, "config": c}
                                     for k, (label, c) in new.items()])  # fmt: skip
            self.engine = answer["engine"]
            for result in answer["results"]:
                self._seen[result["id"]] = result.get("summary")
        return [self._seen[k] for k in keys]

    def summary(self, label: str, config: dict[str, Any]) -> Summary | None:
        return self.summaries([(label, config)])[0]


# --- the search, pure --------------------------------------------------------------------


def highest_meeting(
    meets: Callable[[float], bool], grid: list[float], whole: bool
) -> tuple[float | None, float | None]:
    """(the highest load found meeting, the lowest found missing) over the ascending `grid`,
    then halving the gap between the longest meeting prefix of the grid and the next grid point
    (whole numbers: to one; otherwise to RATE_PRECISION). (None, first): the first grid point
    already misses; (last, None): every grid point meets."""
    lo = hi = None
    for point in grid:
        if not meets(point):
            hi = point
            break
        lo = point
    if lo is None or hi is None:
        return lo, hi
    while (hi - lo > 1) if whole else (hi - lo > RATE_PRECISION * lo):
        mid = (lo + hi) // 2 if whole else (lo + hi) / 2
        if meets(mid):
            lo = mid
        else:
            hi = mid
    return lo, hi


def doubling(start: float, steps: int) -> list[float]:
    return [start * 2**k for k in range(steps)]


def powers_up_to(top: int) -> list[int]:
    """1, 2, 4, ... below `top`, and `top`."""
    return [2**k for k in range(top.bit_length()) if 2**k < top] + [top]


def round_down(value: float, digits: int = 3) -> float:
    """`value` to `digits` significant digits, never up (a target above the capacity it comes
    from would hold a replica past the SLO)."""
    if value <= 0:
        return 0.0
    scale = 10 ** (digits - 1 - math.floor(math.log10(value)))
    return math.floor(value * scale) / scale


# --- what one pool holds -----------------------------------------------------------------


@dataclass(frozen=True)
class PoolCapacity:
    """What one replica of `pool` holds within the SLO, in `metric`'s unit, and the target."""

    pool: str
    metric: str
    capacity: float | None  # None: not even the least load meets the SLO
    target: float | None
    limit: str  # the SLO it holds, e.g. "TTFT p50 <= 500 ms"
    saturation: float | None = None  # what an overloaded replica reads, in the metric's unit
    requests_per_second: float | None = None  # prefill: the rate behind the capacity
    at_least: bool = False  # every load tried met the SLO: it holds at least this
    why: str = ""  # when capacity is None

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "metric": self.metric,
            "target": self.target,
            "capacity": self.capacity,
            "limit": self.limit,
        }
        if self.requests_per_second is not None:
            out["requestsPerSecond"] = round(self.requests_per_second, 2)
        if self.at_least:
            out["atLeast"] = True
        if self.why:
            out["why"] = self.why
        return out


@dataclass(frozen=True)
class Probe:
    """What the searches simulate: the target, the workload, each pool's --max-num-seqs."""

    target: Target
    workload: Workload
    max_num_seqs: dict[str, int]  # prefill, decode, colocated

    def traffic(self, load: dict[str, Any], requests: int) -> dict[str, Any]:
        """The workload's mean lengths (a trace is searched at its means), `requests` of them."""
        source = {"type": "synthetic", "input_tokens": round(self.workload.mean_input),
                  "output_tokens": round(self.workload.mean_output)}  # fmt: skip
        return {"source": source, "load": load, "stop": {"requests": requests}}

    def config(self, layout: Layout, load: dict[str, Any], requests: int,
               batch: dict[str, int]) -> dict[str, Any]:  # fmt: skip
        """The prediction config of `layout` under `load`, each role's scheduler at `batch`."""
        config = prediction_config(self.target, layout, self.traffic(load, requests))
        workers = config["engine"]["workers"]
        for role, sequences in batch.items():
            workers[role]["scheduler"] = {"max_sequences": sequences}
        return config


def _rate(rps: float) -> dict[str, Any]:
    return {"type": "poisson", "requests_per_second": rps, "seed": 0}


def _rate_requests(rps: float) -> int:
    """A minute of arrivals (at least 256, at most 2000): the queue settles, the last
    requests' decode (a few seconds) is small beside it."""
    return min(2000, max(256, math.ceil(rps * 60)))


def _in_flight(c: int) -> dict[str, Any]:
    return {"type": "concurrency", "concurrency": int(c)}


def _flight_requests(c: int) -> int:
    return max(128, 8 * int(c))


@dataclass(frozen=True)
class Prefiller:
    """One prefill worker of a layout, unloaded and overloaded: SLO-free, so every search and
    every SLO reads the same."""

    layout: Layout  # the layout whose prefill (and decode) TP it has
    service_ms: float  # its median TTFT with one request in flight
    token_ms: float  # the decoder's median TPOT then
    saturation: float | None  # prompt tokens/s it serves overloaded (None: not simulated)

    @property
    def service_rate(self) -> float:
        return 1000 / self.service_ms


def _prefill_unit(layout: Layout, decoders: int) -> Layout:
    return Layout("dpd", 1, layout.tp, decoders, layout.decode_tp)


def _prefill_run(
    probe: Probe, layout: Layout, token_ms: float, rps: float, runs: Runs, served: float = 0
):
    """One prefill worker at `rps` Poisson arrivals, with decoders enough to be no limit, for a
    minute of what it serves (`served` requests/s when overloaded, else `rps`)."""
    running = rps * probe.workload.mean_output * token_ms / 1000  # what decoders hold (Little)
    decoders = max(1, math.ceil(layout.decode_replicas / layout.replicas),
                   math.ceil(running / (SIMULATOR_BATCH / 2)))  # fmt: skip
    batch = {"prefill": probe.max_num_seqs["prefill"]}
    requests = _rate_requests(served or rps)
    config = probe.config(_prefill_unit(layout, decoders), _rate(rps), requests, batch)
    return runs.summary(f"prefill at {rps:.3g} requests/s", config)


def prefiller(probe: Probe, layout: Layout, runs: Runs) -> Prefiller | None:
    """`layout`'s prefill worker alone (one request in flight) and at OVERLOAD x its service
    rate; None when the engine refuses it."""
    batch = {"prefill": probe.max_num_seqs["prefill"]}
    config = probe.config(_prefill_unit(layout, 1), _in_flight(1), 16, batch)
    alone = runs.summary("prefill alone", config)
    if alone is None:
        return None
    service_ms, token_ms = float(alone["median_ttft_ms"]), float(alone["median_tpot_ms"])
    service_rate = 1000 / service_ms  # overloaded, it serves up to 2x this (batching)
    over = _prefill_run(probe, layout, token_ms, OVERLOAD * service_rate, runs, 2 * service_rate)
    saturation = None if over is None else float(over["input_throughput_tok_s"])
    return Prefiller(layout, service_ms, token_ms, saturation)


def prefill_capacity(probe: Probe, unit: Prefiller, ttft_ms: float, runs: Runs) -> PoolCapacity:
    """One prefill worker, rated by its median TTFT."""
    metric, limit = "prompt-tokens-per-second", f"TTFT {PERCENTILE} <= {ttft_ms:g} ms"
    saturation = unit.saturation
    if unit.service_ms > ttft_ms:
        why = f"one request alone takes {unit.service_ms:.0f} ms to its first token"
        return PoolCapacity("prefill", metric, None, None, limit, saturation, why=why)

    def meets(rps: float) -> bool:
        """The SLO held at `rps`, and `rps` served: past saturation a minute's queue may still
        keep the median TTFT in, but it grows without end."""
        s = _prefill_run(probe, unit.layout, unit.token_ms, rps, runs)
        return (s is not None and float(s["median_ttft_ms"]) <= ttft_ms
                and float(s["request_throughput_rps"]) >= SERVED * rps)  # fmt: skip

    grid = doubling(unit.service_rate / 2, RATE_STEPS)
    lo, hi = highest_meeting(meets, grid, whole=False)
    if lo is None:  # below the grid: the same search over rates halving from its first point
        lo, hi = highest_meeting(meets, [grid[0] / 2**k for k in range(8, 0, -1)], whole=False)
    if lo is None:
        why = f"even {grid[0] / 2**8:.3g} requests/s miss it"
        return PoolCapacity("prefill", metric, None, None, limit, saturation, why=why)
    capacity = lo * probe.workload.mean_input
    if saturation is not None:  # no more than it serves overloaded, whatever a minute shows
        capacity = min(capacity, saturation)
    target = capacity if saturation is None else min(capacity, saturation / SATURATION)
    return PoolCapacity("prefill", metric, round_down(capacity), round_down(target), limit,
                        saturation, requests_per_second=lo, at_least=hi is None)  # fmt: skip


def decode_capacity(probe: Probe, unit: Prefiller, tpot_ms: float, runs: Runs) -> PoolCapacity:
    """One decode worker at the decoder's --max-num-seqs, rated by its median TPOT; fed by
    prefill workers enough for every request it could finish (`unit`'s saturation)."""
    metric, limit = "running-requests", f"TPOT {PERCENTILE} <= {tpot_ms:g} ms"
    layout, top = unit.layout, probe.max_num_seqs["decode"]
    batch = {"decode": top}
    finishing = top / (probe.workload.mean_output * unit.token_ms / 1000)
    prefill_rps = (unit.saturation or 0) / probe.workload.mean_input
    feeders = max(1, math.ceil(layout.replicas / layout.decode_replicas),
                  math.ceil(finishing * SATURATION / prefill_rps) if prefill_rps else 1)  # fmt: skip
    fed = Layout("dpd", feeders, layout.tp, 1, layout.decode_tp)

    def config(c: int) -> tuple[str, dict[str, Any]]:
        return (f"decode at {c} in flight",
                probe.config(fed, _in_flight(c), _flight_requests(c), batch))  # fmt: skip

    grid = powers_up_to(top)
    shares = [_decoding_share(s) for s in runs.summaries([config(c) for c in grid]) if s]
    share = min(shares) if shares else 1.0

    def meets(c: float) -> bool:
        s = runs.summary(*config(int(c)))
        return s is not None and float(s["median_tpot_ms"]) <= tpot_ms

    lo, hi = highest_meeting(meets, [float(c) for c in grid], whole=True)
    if lo is None:
        why = f"one request in flight decodes at {unit.token_ms:.1f} ms a token"
        return PoolCapacity("decode", metric, None, None, limit, float(top), why=why)
    capacity = lo * share
    return PoolCapacity("decode", metric, round_down(capacity, 2),
                        round_down(min(capacity, top / SATURATION), 2), limit, float(top),
                        at_least=hi is None)  # fmt: skip


def _decoding_share(s: Summary) -> float:
    """The share of a request's time past its first token (Little's law over a closed loop:
    the share of those in flight that are decoding)."""
    e2e, ttft = float(s["mean_e2e_latency_ms"] or 0), float(s["mean_ttft_ms"] or 0)
    return max(0.0, (e2e - ttft) / e2e) if e2e > 0 else 1.0


def colocated_capacity(
    probe: Probe, layout: Layout, ttft_ms: float | None, tpot_ms: float | None, runs: Runs
) -> PoolCapacity:
    """One colocated worker of `layout` (its TP) at its --max-num-seqs, rated by both medians."""
    slos = [f"TTFT {PERCENTILE} <= {ttft_ms:g} ms" if ttft_ms else "",
            f"TPOT {PERCENTILE} <= {tpot_ms:g} ms" if tpot_ms else ""]  # fmt: skip
    metric, limit = "running-requests", " and ".join(s for s in slos if s)
    top = probe.max_num_seqs["colocated"]
    batch = {"aggregated": top}
    unit = Layout("colocated", 1, layout.tp)

    def config(c: int) -> tuple[str, dict[str, Any]]:
        return (f"colocated at {c} in flight",
                probe.config(unit, _in_flight(c), _flight_requests(c), batch))  # fmt: skip

    def meets(c: float) -> bool:
        s = runs.summary(*config(int(c)))
        return (s is not None and (not ttft_ms or float(s["median_ttft_ms"]) <= ttft_ms)
                and (not tpot_ms or float(s["median_tpot_ms"]) <= tpot_ms))  # fmt: skip

    grid = powers_up_to(top)
    runs.summaries([config(c) for c in grid])
    lo, hi = highest_meeting(meets, [float(c) for c in grid], whole=True)
    if lo is None:
        return PoolCapacity("colocated", metric, None, None, limit, float(top),
                            why="one request alone misses it")  # fmt: skip
    return PoolCapacity("colocated", metric, round_down(lo, 2),
                        round_down(min(lo, top / SATURATION), 2), limit, float(top),
                        at_least=hi is None)  # fmt: skip


def capacities(probe: Probe, layout: Layout, runs: Runs) -> dict[str, PoolCapacity]:
    """Each pool of `layout` with an SLO to hold: prefill (TTFT) and decode (TPOT), or the
    colocated pool (either)."""
    w = probe.workload
    if layout.mode == "colocated":
        if not (w.ttft_ms or w.tpot_ms):
            return {}
        return {"colocated": colocated_capacity(probe, layout, w.ttft_ms, w.tpot_ms, runs)}
    if not (w.ttft_ms or w.tpot_ms):
        return {}
    unit = prefiller(probe, layout, runs)
    if unit is None:
        return {}
    out = {}
    if w.ttft_ms:
        out["prefill"] = prefill_capacity(probe, unit, w.ttft_ms, runs)
    if w.tpot_ms:
        out["decode"] = decode_capacity(probe, unit, w.tpot_ms, runs)
    return out
