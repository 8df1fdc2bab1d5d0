"""The benchmark's real parts, per session: aiperf's venv, a one-token-per-word tokenizer and
fake OpenAI-compatible servers (hyperpod_dpd/benchmark/fake_server.py) with known timings."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from core import api_key
from hyperpod_dpd.benchmark.loadgen import ROOT, VENV, loadtest_venv
from specs.slo.series import PREFIX_CACHE_HITS, PREFIX_CACHE_QUERIES
from tests.support.program_runs import exclusive

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

    def prefix_cache(self) -> dict[str, int]:
        """The prompt tokens the server looked up in its prefix cache, and found (its /metrics,
        vLLM's two counters)."""
        with urllib.request.urlopen(f"{self.url}/metrics", timeout=10) as answer:
            text = answer.read().decode()
        counts = {}
        for name, series in (("queries", PREFIX_CACHE_QUERIES), ("hits", PREFIX_CACHE_HITS)):
            (value,) = re.findall(rf"^{re.escape(series)}{{[^}}]*}} (\d+)$", text, re.M)
            counts[name] = int(value)
        return counts

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


def results_of(out: Path) -> dict:
    return json.loads((out / "results.json").read_text())
