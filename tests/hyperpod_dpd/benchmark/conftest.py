"""The benchmark's real parts, per session: aiperf's venv, a one-token-per-word tokenizer and
fake OpenAI-compatible servers (hyperpod_dpd/benchmark/fake_server.py) with known timings."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from core import api_key
from hyperpod_dpd.benchmark.loadgen import ROOT, VENV, loadtest_venv
from tests.program_runs import exclusive

SERVER = "hyperpod_dpd.benchmark.fake_server"
WORD_TOKENIZER = ROOT / "hyperpod_dpd" / "benchmark" / "word_tokenizer"


@pytest.fixture(scope="session")
def bench_venv() -> Path:
    """build/loadtest-venv (make test builds it first; parallel workers take turns)."""
    VENV.parent.mkdir(parents=True, exist_ok=True)
    with exclusive(VENV.parent / ".loadtest-venv.lock"):
        return loadtest_venv()


@pytest.fixture(scope="session")
def tokenizer() -> Path:
    """The word-level tokenizer shipped for trying the benchmark out (whitespace split, one token
    per word): prompt tokens are then the words the fake server counts, so its time to first
    token is known exactly."""
    return WORD_TOKENIZER


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class FakeServer:
    def __init__(self, venv: Path, key: str | None = None, **timings: float):
        self.port = _free_port()
        argv = [str(venv / "bin" / "python"), "-m", SERVER, "--port", str(self.port)]
        for name, value in timings.items():
            argv += [f"--{name.replace('_', '-')}", str(value)]
        env = {"PYTHONPATH": str(ROOT), **({api_key.ENV: key} if key else {})}
        self.process = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env
        )
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                if self.process.poll() is not None:
                    out = self.process.stdout.read()
                    raise AssertionError(f"fake server exited: {out}") from None
                time.sleep(0.05)
        raise AssertionError("fake server did not start in 30 s")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


@pytest.fixture
def fake_server(bench_venv) -> Iterator:
    """`fake_server(**timings)` starts one; all are stopped after the test."""
    started: list[FakeServer] = []

    def start(key: str | None = None, **timings: float) -> FakeServer:
        server = FakeServer(bench_venv, key, **timings)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


# The two endpoints the measuring tests run against, each once per session (an aiperf level
# costs ~6 s of start-up beside its measuring time): time to first token = FIRST + PER_TOKEN x
# prompt tokens (+ TRANSFER for the KV cache under DPD); every later token TPOT after the last,
# INTERFERENCE times that while a prompt prefills on the colocated one. A prefill of realistic
# size (a 70B model's TTFT for 1k tokens is a few hundred ms) keeps the client's and server's own
# few ms per request, on 2 shared cores, well inside 10%. The transfer is large enough (a fifth
# of the first token) that the DPD run's later first token stands clear of the tens of ms a busy
# machine adds to either run's (30 ms let a loaded run measure DPD 0.2% faster).
FIRST_MS, PER_TOKEN_MS, TPOT_MS, TRANSFER_MS, INTERFERENCE = 100.0, 0.3, 20.0, 100.0, 5.0
IN, OUT = 1024, 32
SCENARIO = f"D({IN},{OUT})"


@dataclass(frozen=True)
class MeasuredRuns:
    """`benchmark run` output directories: `dpd` at concurrency 1 and 16 (a sweep), the
    colocated endpoint at 16 alone."""

    dpd: Path
    colocated: Path


@pytest.fixture(scope="session")
def measured_runs(bench_venv, tokenizer, tmp_path_factory) -> Iterator[MeasuredRuns]:
    """Both runs for real, as users start them (the tokenizer once as its directory, once as
    its tokenizer.json); the tests that read them are in the one `aiperf` xdist group, so a
    session computes them once and never beside another load generator."""
    from hyperpod_dpd.cli import main

    base = tmp_path_factory.mktemp("measured")
    timings = {"first_token_ms": FIRST_MS, "prefill_ms_per_token": PER_TOKEN_MS,
               "tpot_ms": TPOT_MS}  # fmt: skip
    dpd = FakeServer(bench_venv, **timings, interference=1.0, transfer_ms=TRANSFER_MS)
    colocated = FakeServer(bench_venv, **timings, interference=INTERFERENCE)
    try:
        for server, tokenizer_arg, levels, seconds, label in (
            (dpd, tokenizer, "1,16", "3", "dpd"),
            (colocated, tokenizer / "tokenizer.json", "16", "2", "colocated"),
        ):
            code = main([
                "benchmark", "run", "--target", server.url, "--tokenizer", str(tokenizer_arg),
                "--scenario", SCENARIO, "--concurrency", levels, "--duration", seconds,
                "--out", str(base / label), "--label", label,
                # Two p5.48xlarge each, as the canary stack's baseline and candidate.
                "--gpus", "16", "--hourly-cost", "110.08",
            ])  # fmt: skip
            assert code == 0, f"benchmark run against the {label} server exited {code}"
    finally:
        dpd.stop()
        colocated.stop()
    yield MeasuredRuns(dpd=base / "dpd", colocated=base / "colocated")


def results_of(out: Path) -> dict:
    return json.loads((out / "results.json").read_text())
