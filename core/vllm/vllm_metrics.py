"""The Prometheus series of the worker images' vLLM (core/versions.py WORKER_VLLM_VERSION), as
scripts/extract_vllm_metrics.py extracted them from vLLM's source into vllm_metrics.json.

Each metric has its type (gauge, counter, histogram), vLLM's own label names, its help text, the
conditions vLLM creates it under (none: always exported) and the series names the exposition
carries (`samples`: a counter's `_total`, a histogram's `_bucket`/`_sum`/`_count`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

DATA = Path(__file__).with_name("vllm_metrics.json")


@dataclass(frozen=True)
class VllmMetric:
    name: str
    type: str  # gauge | counter | histogram
    labels: tuple[str, ...] | None  # None: set at run time
    help: str
    when: tuple[str, ...]  # the conditions vLLM creates it under; () always
    samples: tuple[str, ...]


@cache
def _data() -> dict:
    return json.loads(DATA.read_text())


def vllm_metrics_version() -> str:
    return _data()["vllm"]


@cache
def vllm_metrics() -> dict[str, VllmMetric]:
    """Metric name -> what vLLM exports under it."""
    return {
        name: VllmMetric(
            name=name,
            type=m["type"],
            labels=None if m["labels"] is None else tuple(m["labels"]),
            help=m["help"],
            when=tuple(m["when"]),
            samples=tuple(m["samples"]),
        )
        for name, m in _data()["metrics"].items()
    }


def exported(name: str, kind: str) -> VllmMetric:
    """The metric `name` of type `kind` (gauge, counter, histogram), which the pinned vLLM always
    exports; KeyError naming the pin otherwise (a vLLM bump that renames or drops it fails here,
    at import of whatever builds on it)."""
    metric = vllm_metrics().get(name)
    if metric is None or metric.type != kind or metric.when:
        raise KeyError(
            f"{name}: not a {kind} vLLM {vllm_metrics_version()} always exports "
            f"(core/vllm/vllm_metrics.json: {metric})"
        )
    return metric


def exported_gauge(name: str) -> VllmMetric:
    """The gauge `name`, which the pinned vLLM always exports (see `exported`)."""
    return exported(name, "gauge")


def counter_series(metric: VllmMetric) -> str:
    """The series a counter is exposed as: its name with `_total` (prometheus_client)."""
    (series,) = [s for s in metric.samples if s == metric.name + "_total"]
    return series
