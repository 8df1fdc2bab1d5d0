"""The workload of a benchmark run, from the command line: `D(IN,OUT)`, concurrencies, stop rule.

`D(4096,256)` is genai-bench's and the AWS article's notation for deterministic prompts of
4,096 input and 256 output tokens; aiperf takes it as a fixed input and output length (standard
deviation 0) with `ignore_eos` so every response has exactly OUT tokens.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass

from core import cli_inputs as inputs
from core.problems import ConfigError, ConfigProblem

_SCENARIO = re.compile(r"^D\((\d+),\s*(\d+)\)$")
MAX_TOKENS = 1_000_000


class BenchmarkArgError(ConfigError):
    """A bad benchmark flag: one ConfigProblem naming the flag, the value, what is allowed and
    how to fix it."""

    def __init__(self, flag: str, value: object, allowed: str, fix: str):
        super().__init__([ConfigProblem(flag, value, allowed, fix)], "benchmark flags")


@dataclass(frozen=True)
class Scenario:
    input_tokens: int
    output_tokens: int

    @property
    def text(self) -> str:
        return f"D({self.input_tokens},{self.output_tokens})"


def parse_scenario(text: str) -> Scenario:
    match = _SCENARIO.match(text.strip())
    if not match:
        raise BenchmarkArgError(
            "--scenario", text, "D(IN,OUT) with whole numbers of input and output tokens",
            "for example --scenario 'D(4096,256)' (the article's workload)",
        )  # fmt: skip
    tokens_in, tokens_out = int(match[1]), int(match[2])
    for side, value in (("input", tokens_in), ("output", tokens_out)):
        if not 1 <= value <= MAX_TOKENS:
            raise BenchmarkArgError(
                "--scenario", text, f"{side} tokens between 1 and {MAX_TOKENS:,}",
                "for example --scenario 'D(4096,256)'",
            )  # fmt: skip
    return Scenario(tokens_in, tokens_out)


def parse_concurrency(text: str) -> list[int]:
    """`8,16,32` -> [8, 16, 32]: distinct positive levels, in the order given."""
    levels: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit() or int(part) < 1:
            raise BenchmarkArgError(
                "--concurrency", text, "a comma-separated list of whole numbers >= 1",
                "for example --concurrency 8,16,32",
            )  # fmt: skip
        if int(part) in levels:
            raise BenchmarkArgError(
                "--concurrency", text, "each level once", f"drop the second {part}"
            )
        levels.append(int(part))
    return levels


@dataclass(frozen=True)
class StopRule:
    """Each concurrency level runs for `requests` requests or `duration` seconds."""

    requests: int | None = None
    duration: float | None = None

    def __post_init__(self):
        if self.requests is not None and self.duration is not None:
            raise BenchmarkArgError(
                "--requests/--duration", f"{self.requests}/{self.duration}", "one of the two",
                "give --requests N or --duration S, not both",
            )  # fmt: skip
        if self.requests is not None and self.requests < 1:
            raise BenchmarkArgError("--requests", self.requests, "at least 1", "use --requests 100")
        if self.duration is not None and self.duration <= 0:
            raise BenchmarkArgError(
                "--duration", self.duration, "seconds > 0", "use --duration 120"
            )


def default_requests(levels: list[int]) -> int:
    """Without a stop rule: 10 requests per slot of the highest level, at least 100 (genai-bench
    recommends at least max(concurrency); more keeps the p99 meaningful)."""
    return max(100, 10 * max(levels))


def add_workload_flags(parser: argparse.ArgumentParser) -> None:
    """The flags that say what load a run sends: the same on the command line and in the
    in-cluster Job's program (hyperpod_dpd/benchmark/in_cluster.py), which is handed them as
    the user typed them."""
    parser.add_argument("--scenario", default="D(4096,256)", help="D(IN,OUT) tokens (D(4096,256))")
    parser.add_argument(
        "--concurrency", default="8,16,32", help="levels, comma-separated (8,16,32)"
    )
    stop = parser.add_mutually_exclusive_group()
    stop.add_argument(
        "--requests", type=int, help="requests per level (default 10 x the top level, >= 100)"
    )
    stop.add_argument("--duration", type=inputs.finite_float, help="seconds per level")
    parser.add_argument("--label", help="the run's name in reports (default: the --out name)")
    parser.add_argument(
        "--model", help="served model name (default: the server's first /v1/models)"
    )


def workload_argv(args: argparse.Namespace, label: str | None = None) -> list[str]:
    """The workload flags of `args` as a command line (what the in-cluster Job is given);
    `label` replaces args.label (the run's label defaults to the local --out's name)."""
    argv = ["--scenario", args.scenario, "--concurrency", args.concurrency]
    values = {**vars(args), "label": label or args.label}
    for flag in ("requests", "duration", "label", "model"):
        value = values[flag]
        if value is not None:
            argv += [f"--{flag}", repr(value) if isinstance(value, float) else str(value)]
    return argv
