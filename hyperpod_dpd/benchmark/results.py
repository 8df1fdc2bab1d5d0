"""results.json: one run's numbers per concurrency, taken from aiperf's exports as they are.

Per level: TTFT, TPOT, ITL and E2E in milliseconds at p50/p95/p99 (and the mean), output
tokens/s, requests/s, requests and errors. aiperf's names: `time_to_first_token`;
`inter_token_latency` is per request (E2E - TTFT) / (output tokens - 1), which is TPOT, the mean
time per output token after the first; `inter_chunk_latency` is every gap between two streamed
chunks, which is ITL (one token per chunk when the server streams token by token);
`request_latency` is E2E.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SCHEMA = "hyperpod-dpd/benchmark-results/v1"
PERCENTILES = ("p50", "p95", "p99")
# Our metric -> aiperf's.
LATENCIES = {
    "ttft": "time_to_first_token",
    "tpot": "inter_token_latency",
    "itl": "inter_chunk_latency",
    "e2e": "request_latency",
}
LATENCY_TITLES = {"ttft": "TTFT", "tpot": "TPOT", "itl": "ITL", "e2e": "E2E latency"}


class ExportError(ValueError):
    """aiperf's export is missing or lacks a metric: names the file and what is missing."""


def level_results(export: dict[str, Any], source: Path) -> dict[str, Any]:
    """One concurrency level's numbers from aiperf's profile_export_aiperf.json."""
    out: dict[str, Any] = {}
    for ours, theirs in LATENCIES.items():
        metric = export.get(theirs)
        if not isinstance(metric, dict):
            raise ExportError(f"{source}: no {theirs} (did any request stream a token?)")
        if metric.get("unit") != "ms":
            raise ExportError(f"{source}: {theirs} is in {metric.get('unit')!r}, expected ms")
        out[ours] = {"mean": metric["avg"], **{p: metric[p] for p in PERCENTILES}}
    requests = int(_avg(export, "request_count"))
    errors = int(_avg(export, "error_request_count"))
    out |= {
        "outputTokensPerSecond": _avg(export, "output_token_throughput"),
        "requestsPerSecond": _avg(export, "request_throughput"),
        "requests": requests,
        "errors": errors,
        "inputTokens": _avg(export, "input_sequence_length"),
        "outputTokens": _avg(export, "output_sequence_length"),
        "durationSeconds": _avg(export, "benchmark_duration"),
    }
    return out


def _avg(export: dict[str, Any], name: str) -> float:
    metric = export.get(name)
    return float(metric["avg"]) if isinstance(metric, dict) and "avg" in metric else 0.0


def write(path: Path, results: dict[str, Any]) -> None:
    path.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")


def read(path: Path) -> dict[str, Any]:
    """A results.json (or the directory holding one), checked to be ours."""
    if path.is_dir():
        path = path / "results.json"
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise ExportError(
            f"{path}: not found (give a directory that `benchmark run` wrote)"
        ) from None
    except (OSError, ValueError) as e:  # not JSON, not UTF-8 text, unreadable
        raise ExportError(f"{path}: not JSON ({type(e).__name__}: {e})"[:300]) from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise ExportError(f"{path}: not a results.json of `hyperpod-dpd benchmark run`")
    return data
