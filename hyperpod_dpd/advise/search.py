"""The layouts `advise` searches, the prediction each needs, and the candidates they make.

Layouts follow what this project deploys: each worker owns a node (it requests all the node's
GPUs; policies/rules/endpoint/tensor_parallel.py), so a layout's nodes are its workers and its GPUs are
what those nodes have, whatever TP uses of them; a DPD layout's decode TP is at least its prefill
TP (the decoder crashes otherwise). Colocated: 1..max-nodes replicas at each TP. DPD: P prefill
and D decode replicas with P + D <= max-nodes, each role at its TP. The TPs tried are the two
largest powers of two up to the node's GPUs at which a worker fits in GPU memory at the stack's
(or the docs') --gpu-memory-utilization and --max-model-len (core/sizing/gpu_memory.py, the same test
the plan's gpu-memory policy applies), so every layout found can be planned.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.sizing.catalog import INSTANCES
from core.sizing.gpu_memory import worker_fit
from hyperpod_dpd.advise.targets import BACKEND, BACKEND_VERSION, Target
from hyperpod_dpd.advise.workload import Workload

TRACE_BLOCK = 512  # tokens per hash id in the Mooncake trace we write (no prefix is shared)
TRACE_HORIZON_S = 3600  # a traced replay stops when every request is done or at this time


@dataclass(frozen=True)
class Layout:
    mode: str  # "colocated" or "dpd"
    replicas: int  # colocated replicas, or prefill replicas
    tp: int  # colocated TP, or prefill TP
    decode_replicas: int = 0
    decode_tp: int = 0

    @property
    def nodes(self) -> int:
        return self.replicas + self.decode_replicas

    @property
    def pool_nodes(self) -> dict[str, int]:
        """The nodes of each pool (each worker owns one)."""
        if self.mode == "colocated":
            return {"colocated": self.replicas}
        return {"prefill": self.replicas, "decode": self.decode_replicas}

    @property
    def label(self) -> str:
        if self.mode == "colocated":
            return f"{self.replicas}x TP{self.tp}"
        return f"{self.replicas}P{self.decode_replicas}D TP{self.tp}/TP{self.decode_tp}"


@dataclass(frozen=True)
class Memory:
    """What a worker must fit: the settings the plan's gpu-memory policy judges."""

    gpu_memory_utilization: float
    max_model_len: int
    pd_buffer_bytes: int


def tp_choices(target: Target, memory: Memory, role: str) -> list[int]:
    """The TPs tried for `role`: the two largest that fit (see the module's docstring)."""
    instance = INSTANCES[target.instance_type]
    fitting = []
    for tp in (1, 2, 4, 8, 16):
        if tp > target.gpus_per_node:
            break
        # As the gpu-memory policy judges it: colocated workers as decoders without a PD buffer.
        buffer = 0 if role == "colocated" else memory.pd_buffer_bytes
        fit = worker_fit("prefill" if role == "prefill" else "decode", target.model, instance, tp,
                         memory.max_model_len, buffer)  # fmt: skip
        u = memory.gpu_memory_utilization
        if fit.holds(u) and fit.leaves_room(u):
            fitting.append(tp)
    return fitting[-2:]


def layouts(target: Target, memory: Memory, max_nodes: int) -> list[Layout]:
    found = [
        Layout("colocated", n, tp)
        for tp in tp_choices(target, memory, "colocated")
        for n in range(1, max_nodes + 1)
    ]
    prefill_tps, decode_tps = (
        tp_choices(target, memory, "prefill"),
        tp_choices(target, memory, "decode"),
    )
    for p in range(1, max_nodes):
        for d in range(1, max_nodes - p + 1):
            found += [
                Layout("dpd", p, ptp, d, dtp)
                for ptp in prefill_tps
                for dtp in decode_tps
                if dtp >= ptp
            ]
    return found


def _workers(layout: Layout) -> dict[str, Any]:
    def worker(replicas: int, tp: int) -> dict[str, Any]:
        return {"parallelism": {"replicas": replicas, "tensor": tp}}

    if layout.mode == "colocated":
        return {"aggregated": worker(layout.replicas, layout.tp)}
    return {
        "prefill": worker(layout.replicas, layout.tp),
        "decode": worker(layout.decode_replicas, layout.decode_tp),
    }


def write_trace(workload: Workload, path: Path, rps: float | None) -> Path:
    """`workload`'s trace as aisimulate reads it (Mooncake JSONL): under --rps the requests
    arrive at that constant rate, under --concurrency the timestamps are not used. Each request
    gets hash ids of its own: the trace says nothing about shared prefixes, so none is cached."""
    gap_ms = 1000.0 / rps if rps else 1.0
    lines, next_id = [], 0
    for n, (inp, out) in enumerate(workload.requests):
        blocks = math.ceil(inp / TRACE_BLOCK)
        ids = list(range(next_id, next_id + blocks))
        next_id += blocks
        lines.append(json.dumps({"timestamp": round(n * gap_ms, 3), "input_length": inp,
                                 "output_length": out, "hash_ids": ids}))  # fmt: skip
    path.write_text("\n".join(lines) + "\n")
    return path


def traffic(workload: Workload, level: float, trace: Path | None) -> dict[str, Any]:
    """aisimulate's `traffic` for one load level: enough requests for the queue to settle
    (8 per request in flight, at least 128; a minute of arrivals under --rps, at most 2000)."""
    if trace is not None:
        source: dict[str, Any] = {"type": "trace", "paths": [str(trace)], "format": "mooncake",
                                  "block_size": TRACE_BLOCK}  # fmt: skip
        load = (
            {"type": "concurrency", "concurrency": int(level)}
            if workload.load == "concurrency"
            else {"type": "trace_timestamps"}
        )
        return {
            "source": source,
            "load": load,
            "stop": {"max_virtual_time_seconds": TRACE_HORIZON_S},
        }
    inp, out = workload.requests[0]
    source = {"type": "synthetic", "input_tokens": inp, "output_tokens": out}
    if workload.load == "concurrency":
        load = {"type": "concurrency", "concurrency": int(level)}
        requests = max(128, 8 * int(level))
    else:
        load = {"type": "poisson", "requests_per_second": level, "seed": 0}
        requests = min(2000, max(128, int(level * 60)))
    return {"source": source, "load": load, "stop": {"requests": requests}}


def prediction_config(
    target: Target, layout: Layout, traffic_config: dict[str, Any]
) -> dict[str, Any]:
    return {
        "traffic": traffic_config,
        "engine": {
            "mode": "aggregated" if layout.mode == "colocated" else "disaggregated",
            "model": target.simulated_model,
            "hardware": target.system,
            "backend": BACKEND,
            "backend_version": BACKEND_VERSION,
            "workers": _workers(layout),
        },
    }


@dataclass(frozen=True)
class Candidate:
    layout: Layout
    level: float
    gpus: int
    ttft_ms: float
    tpot_ms: float
    e2e_ms: float
    tokens_per_s_per_gpu: float
    cost_per_million: float | None
    meets_slo: bool
    misses: tuple[tuple[str, float, float], ...]  # (metric, predicted, SLO) of each SLO missed

    def as_json(self, workload: Workload) -> dict[str, Any]:
        return {
            "mode": self.layout.mode,
            "layout": self.layout.label,
            "nodes": self.layout.nodes,
            "gpus": self.gpus,
            workload.load: self.level,
            "ttftMs": round(self.ttft_ms, 1),
            "tpotMs": round(self.tpot_ms, 2),
            "e2eMs": round(self.e2e_ms, 1),
            "outputTokensPerSecondPerGpu": round(self.tokens_per_s_per_gpu, 1),
            "costPerMillionOutputTokens": (
                None if self.cost_per_million is None else round(self.cost_per_million, 2)
            ),
            "meetsSlo": self.meets_slo,
        }


def candidate(
    layout: Layout, level: float, summary: dict[str, Any], target: Target, workload: Workload,
    hourly: float | None,
) -> Candidate:  # fmt: skip
    gpus = layout.nodes * target.gpus_per_node
    tokens = float(summary["output_throughput_tok_s"] or 0.0)
    cost = None
    if hourly is not None and tokens > 0:
        cost = layout.nodes * hourly / (tokens * 3600) * 1e6
    ttft, tpot = float(summary["median_ttft_ms"]), float(summary["median_tpot_ms"])
    misses = tuple(
        (name, value, slo)
        for name, value, slo in (("TTFT", ttft, workload.ttft_ms), ("TPOT", tpot, workload.tpot_ms))
        if slo is not None and value > slo
    )
    return Candidate(
        layout=layout,
        level=level,
        gpus=gpus,
        ttft_ms=ttft,
        tpot_ms=tpot,
        e2e_ms=float(summary["median_e2e_latency_ms"]),
        tokens_per_s_per_gpu=tokens / gpus,
        cost_per_million=cost,
        meets_slo=not misses,
        misses=misses,
    )
