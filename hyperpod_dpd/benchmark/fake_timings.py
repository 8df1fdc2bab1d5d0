"""The fake server's timings and flags (standard library only: `hyperpod-dpd benchmark
fake-server` parses them without loading aiohttp, then starts fake_server.py in the benchmark
venv with them)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from core import cli_inputs as inputs


# The defaults are a prefill and a decode of realistic size (a 70B model's first token for 1k
# prompt tokens takes a few hundred ms): the client's and the server's own few ms per request,
# on a busy laptop, stay well inside the differences a comparison shows.
@dataclass(frozen=True)
class Timings:
    first_token_ms: float = 100.0
    prefill_ms_per_token: float = 0.3
    tpot_ms: float = 20.0
    interference: float = 1.0  # decode slow-down while a prefill runs (colocated)
    transfer_ms: float = 0.0  # added to the first token (disaggregated KV transfer)

    def ttft_ms(self, prompt_tokens: int) -> float:
        return self.first_token_ms + self.prefill_ms_per_token * prompt_tokens + self.transfer_ms


# (flag, Timings field): the timing flags, shared with `hyperpod-dpd benchmark fake-server`.
FLAGS = (
    ("--first-token-ms", "first_token_ms"),
    ("--prefill-ms-per-token", "prefill_ms_per_token"),
    ("--tpot-ms", "tpot_ms"),
    ("--interference", "interference"),
    ("--transfer-ms", "transfer_ms"),
)
HELP = {
    "first_token_ms": "time to the first token of an empty prompt, ms",
    "prefill_ms_per_token": "prefill time per prompt token, ms (TTFT grows with the prompt)",
    "tpot_ms": "time per output token after the first, ms",
    "interference": "decode slow-down factor while a prefill runs (colocated: > 1)",
    "transfer_ms": "KV transfer time added to the first token (disaggregated)",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on")
    for flag, field in FLAGS:
        default = getattr(Timings, field)
        parser.add_argument(
            flag,
            type=inputs.finite_float,
            default=default,
            help=f"{HELP[field]} (default: {default:g})",
        )


def timings_of(args: argparse.Namespace) -> Timings:
    """The timings parsed `args` set (the defaults for those not given)."""
    return Timings(**{field: getattr(args, field) for _, field in FLAGS})


def argv_of(args: argparse.Namespace) -> list[str]:
    """The flags of parsed `args` again, to start the server with them."""
    argv = ["--host", args.host, "--port", str(args.port)]
    for flag, field in FLAGS:
        argv += [flag, str(getattr(args, field))]
    return argv
