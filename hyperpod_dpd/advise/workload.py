"""The workload `advise` simulates: fixed lengths or a trace, the load levels, the SLOs, each
checked so that bad input ends with exit 2 naming the flag, the value, what is allowed, the fix.

A trace is JSONL, one request a line, holding its input and output token counts under any of
these names: `input_tokens`/`output_tokens`, `input_length`/`output_length` (Mooncake traces),
or aiperf's per-request records (`profile_export.jsonl`: `metrics.input_sequence_length.value`
and `metrics.output_sequence_length.value`), which is what a `benchmark run` leaves beside its
results.json.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.exits import UsageProblem

_NAMES = (
    ("input_tokens", "output_tokens"),
    ("input_length", "output_length"),
    ("input_sequence_length", "output_sequence_length"),
)


@dataclass(frozen=True)
class Workload:
    """Lengths (fixed, or one pair per traced request), load levels and SLOs."""

    requests: tuple[tuple[int, int], ...]  # (input, output) tokens; one pair: fixed lengths
    trace: Path | None
    concurrency: tuple[int, ...] = ()
    rps: tuple[float, ...] = ()
    ttft_ms: float | None = None
    tpot_ms: float | None = None
    levels: tuple[float, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "levels", self.concurrency or self.rps)

    @property
    def load(self) -> str:
        return "concurrency" if self.concurrency else "rps"

    @property
    def mean_input(self) -> float:
        return sum(i for i, _ in self.requests) / len(self.requests)

    @property
    def mean_output(self) -> float:
        return sum(o for _, o in self.requests) / len(self.requests)

    def as_json(self) -> dict[str, Any]:
        lengths: dict[str, Any]
        if self.trace is None:
            lengths = {"isl": self.requests[0][0], "osl": self.requests[0][1]}
        else:
            lengths = {
                "trace": str(self.trace),
                "requests": len(self.requests),
                "meanIsl": round(self.mean_input, 1),
                "meanOsl": round(self.mean_output, 1),
            }
        load = (
            {"concurrency": list(self.concurrency)} if self.concurrency else {"rps": list(self.rps)}
        )
        return {**lengths, **load, "slo": {"ttftMs": self.ttft_ms, "tpotMs": self.tpot_ms}}

    def shape(self) -> str:
        """The lengths and the load levels, without the SLO."""
        if self.trace is None:
            lengths = f"ISL {self.requests[0][0]} / OSL {self.requests[0][1]}"
        else:
            lengths = (
                f"trace {self.trace.name} ({len(self.requests)} requests, mean ISL "
                f"{self.mean_input:.0f} / OSL {self.mean_output:.0f})"
            )
        return f"{lengths}; {self.load} {', '.join(f'{v:g}' for v in self.levels)}"

    def describe(self) -> str:
        slos = [f"TTFT <= {self.ttft_ms:g} ms" if self.ttft_ms else "",
                f"TPOT <= {self.tpot_ms:g} ms" if self.tpot_ms else ""]  # fmt: skip
        slo = ", ".join(s for s in slos if s) or "no SLO given"
        return f"{self.shape()}; {slo}"


def _positive(flag: str, value: float | None, what: str) -> None:
    if value is not None and not value > 0:
        raise UsageProblem(f"{flag} {value:g}: {what} must be above 0. Give a positive number.")


def read_trace(path: Path) -> list[tuple[int, int]]:
    """The (input, output) token counts of each request of a JSONL trace."""
    try:
        lines = path.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageProblem(f"--trace {path}: cannot read it ({exc}). Give a JSONL file.") from exc
    pairs = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UsageProblem(
                f"--trace {path}: line {n} is not JSON ({exc.msg}); the trace is JSONL, one "
                'request a line, e.g. {"input_tokens": 4096, "output_tokens": 256}. Fix the line.'
            ) from exc
        pair = _lengths(record)
        if pair is None:
            raise UsageProblem(
                f"--trace {path}: line {n} holds no input/output token counts (allowed names: "
                f"{', '.join('/'.join(p) for p in _NAMES)}, or aiperf's metrics record). Fix the "
                "line."
            )
        if min(pair) <= 0 or any(isinstance(v, bool) or not isinstance(v, int) for v in pair):
            raise UsageProblem(
                f"--trace {path}: line {n} has input {pair[0]!r}, output {pair[1]!r} tokens: "
                "both must be whole numbers above 0. Fix or drop the line."
            )
        pairs.append(pair)
    if not pairs:
        raise UsageProblem(f"--trace {path}: no requests in it. Give a JSONL file with some.")
    return pairs


def _lengths(record: Any) -> tuple[Any, Any] | None:
    if not isinstance(record, dict):
        return None
    metrics = record.get("metrics")
    if isinstance(metrics, dict):  # aiperf: {"metrics": {"input_sequence_length": {"value": N}}}
        record = {k: (v.get("value") if isinstance(v, dict) else v) for k, v in metrics.items()}
    for inp, out in _NAMES:
        if inp in record and out in record:
            return _whole(record[inp]), _whole(record[out])
    return None


def _whole(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


def workload(
    isl: int | None,
    osl: int | None,
    trace: Path | None,
    concurrency: list[int] | None,
    rps: list[float] | None,
    ttft_ms: float | None,
    tpot_ms: float | None,
    context: int,
    context_key: str,
) -> Workload:
    """The checked workload; `context` is the longest request the model serves (named by
    `context_key` in the message)."""
    if trace is not None and (isl is not None or osl is not None):
        raise UsageProblem("--trace with --isl/--osl: give one of them. Drop --isl and --osl.")
    if trace is None and (isl is None or osl is None):
        raise UsageProblem(
            "--isl and --osl (input and output tokens per request), or --trace FILE: the "
            "workload is missing. E.g. --isl 4096 --osl 256."
        )
    if trace is None:
        for flag, value in (("--isl", isl), ("--osl", osl)):
            if value is not None and value <= 0:
                raise UsageProblem(
                    f"{flag} {value}: tokens must be above 0. Give a positive count."
                )
        pairs = [(int(isl), int(osl))]  # type: ignore[arg-type]
    else:
        pairs = read_trace(trace)
    longest = max(i + o for i, o in pairs)
    if longest > context:
        flag = "--trace" if trace else "--isl/--osl"
        raise UsageProblem(
            f"{flag}: a request of {longest} tokens (input + output) is above {context_key} "
            f"({context}). Shorten the requests or raise {context_key}."
        )
    if concurrency and rps:
        raise UsageProblem("--concurrency with --rps: give one load. Drop one of them.")
    for c in concurrency or []:
        if c <= 0:
            raise UsageProblem(f"--concurrency {c}: requests in flight must be above 0.")
    for r in rps or []:
        _positive("--rps", r, "requests per second")
    _positive("--ttft-ms", ttft_ms, "the TTFT SLO")
    _positive("--tpot-ms", tpot_ms, "the TPOT SLO")
    return Workload(
        requests=tuple(pairs),
        trace=trace,
        concurrency=tuple(sorted(set(concurrency or ([] if rps else [8, 16, 32])))),
        rps=tuple(sorted(set(rps or []))),
        ttft_ms=ttft_ms,
        tpot_ms=tpot_ms,
    )
