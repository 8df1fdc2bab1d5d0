"""Pure parsers for the log lines that prove a DPD endpoint works (the lines the AWS DPD guide
shows, https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-model-deployment-dpd.html).

- vLLM production-stack router (container `router-container`):
  `[INFO] Conditional routing: estimated_tokens=6750, threshold=4096, disaggregate=True`
  `[INFO] DPD prefill selection: PrefixAwareRouter selected http://10.1.54.203:8081`
- LMCache on the decoder, one line per TP rank:
  `[Worker_TP5] [LMCache INFO] [req_id=cmpl-...] Retrieved 6035 out of 6035 required tokens
  (from 6035 total tokens). size: 0.2344 gb, cost 1.3304 ms, throughput: 176.1686 GB/s`
- The worker's LMCache config dict at start: `... 'pd_role': 'sender', ...` (prefill) or
  `'receiver'` (decode).
- A full decoder PD buffer: `Failed to allocate memory object, retrying...`.

Every function takes log text (or one line) and returns plain data; nothing here reads a cluster.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ROUTING = re.compile(
    r"Conditional routing: estimated_tokens=(?P<tokens>\d+), threshold=(?P<threshold>\d+), "
    r"disaggregate=(?P<disaggregate>True|False)"
)
_PREFILL_SELECTION = re.compile(r"DPD prefill selection: (?P<router>\w+) selected (?P<url>\S+)")
_RETRIEVED = re.compile(
    r"Retrieved (?P<retrieved>\d+) out of (?P<required>\d+) required tokens"
    r"(?: \(from (?P<total>\d+) total tokens\))?"
    r"(?:\.\s*size: (?P<size>[\d.]+) gb, cost (?P<cost>[\d.]+) ms, "
    r"throughput: (?P<throughput>[\d.]+) GB/s)?"
)
_REQ_ID = re.compile(r"\[req_id=(?P<req_id>[^\]\s]+)\]")
_WORKER = re.compile(r"\[(?P<worker>Worker_TP\d+)\]")
# The config dict is printed with repr() (single quotes); accept JSON's double quotes too.
_PD_ROLE = re.compile(r"""['"]pd_role['"]\s*:\s*['"](?P<role>[A-Za-z_]+)['"]""")
BUFFER_FULL = "Failed to allocate memory object"


@dataclass(frozen=True)
class RoutingDecision:
    estimated_tokens: int
    threshold: int
    disaggregate: bool


@dataclass(frozen=True)
class PrefillSelection:
    router: str  # e.g. PrefixAwareRouter
    url: str


@dataclass(frozen=True)
class KvRetrieval:
    retrieved: int
    required: int
    total: int | None
    size_gb: float | None  # LMCache's "gb" is GiB: the docs' 0.2344 = 24 chunks x 256 x 40 KiB
    cost_ms: float | None
    throughput_gbps: float | None
    req_id: str | None
    worker: str | None  # Worker_TP<rank>, when the line names it

    @property
    def complete(self) -> bool:
        return self.required > 0 and self.retrieved == self.required


def parse_routing(line: str) -> RoutingDecision | None:
    m = _ROUTING.search(line)
    if not m:
        return None
    return RoutingDecision(int(m["tokens"]), int(m["threshold"]), m["disaggregate"] == "True")


def parse_prefill_selection(line: str) -> PrefillSelection | None:
    m = _PREFILL_SELECTION.search(line)
    return PrefillSelection(m["router"], m["url"]) if m else None


def parse_retrieval(line: str) -> KvRetrieval | None:
    m = _RETRIEVED.search(line)
    if not m:
        return None
    req = _REQ_ID.search(line)
    worker = _WORKER.search(line)
    return KvRetrieval(
        retrieved=int(m["retrieved"]),
        required=int(m["required"]),
        total=_int(m["total"]),
        size_gb=_float(m["size"]),
        cost_ms=_float(m["cost"]),
        throughput_gbps=_float(m["throughput"]),
        req_id=req["req_id"] if req else None,
        worker=worker["worker"] if worker else None,
    )


def routing_decisions(text: str) -> list[RoutingDecision]:
    return [d for d in map(parse_routing, text.splitlines()) if d]


def prefill_selections(text: str) -> list[PrefillSelection]:
    return [s for s in map(parse_prefill_selection, text.splitlines()) if s]


def retrievals(text: str) -> list[KvRetrieval]:
    return [r for r in map(parse_retrieval, text.splitlines()) if r]


def pd_roles(text: str) -> set[str]:
    """Every `pd_role` value the log names (the docs' `grep -oE "'pd_role': '[a-z]+'" | sort -u`)."""
    return {m["role"] for m in _PD_ROLE.finditer(text)}


def buffer_full_count(text: str) -> int:
    return sum(BUFFER_FULL in line for line in text.splitlines())


def _int(text: str | None) -> int | None:
    return int(text) if text is not None else None


def _float(text: str | None) -> float | None:
    return float(text) if text is not None else None
