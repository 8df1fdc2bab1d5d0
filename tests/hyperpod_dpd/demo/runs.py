"""`hyperpod-dpd demo` run for real, as `make demo` runs it, and what it left running.

A demo run costs ~20 CPU-s (two aiperf runs, each ~7 s of its services starting and stopping;
the charts; two Prometheus servers and the canary), so a session runs it once for the tests
that read its benchmark (tests/hyperpod_dpd/conftest.py `demo_run`) and the demo test runs it
once more."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import ROOT
from tests.support import processes

# The session's run: loaded enough that the colocated server's decode waits on prefills. Each
# stream's requests take ~1.2 s, and all start together: the streams drift apart (and prefills
# overlap decodes) over a few rounds. Two rounds (2 s) once measured no gain in tokens/s in
# three runs; three rounds gave +11% and more.
MEASURED = ("--concurrency", "8", "--duration", "3")
# The demo test's second run: only that it runs again, so as short as the demo allows.
QUICK = ("--concurrency", "4", "--duration", "1")
URL = re.compile(r"http://127\.0\.0\.1:(\d+)")


@dataclass(frozen=True)
class DemoRun:
    out: Path  # the demo's --out
    flags: tuple[str, ...]  # its --concurrency and --duration
    returncode: int
    stdout: str
    stderr: str
    ports: set[int]  # every port it printed: its fake servers' and Prometheus servers'
    left_behind: list[str]  # what still ran or listened of it once it had ended


def run_demo(out: Path, flags: tuple[str, ...]) -> DemoRun:
    """The demo with a temporary directory of its own (TMPDIR, short: a Unix socket's path
    in it may have 107 characters), so that what it leaves there is seen."""
    argv = [sys.executable, "-m", "hyperpod_dpd.cli", "demo", "--out", str(out), *flags]
    with tempfile.TemporaryDirectory() as tmp:
        run = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False,
                             timeout=600, env={**os.environ, "TMPDIR": tmp})  # fmt: skip
        kept = [f"{p.name} left in its temporary directory" for p in Path(tmp).iterdir()]
    ports = ports_in(run.stdout)
    return DemoRun(out, flags, run.returncode, run.stdout, run.stderr, ports,
                   left_behind(out, ports) + kept)  # fmt: skip


def ports_in(output: str) -> set[int]:
    return {int(port) for port in URL.findall(output)}


def left_behind(out: Path, ports: set[int]) -> list[str]:
    """What still runs or listens of a demo that wrote to `out` and served on `ports`."""
    listening = [f"port {p} listening" for p in sorted(ports & processes.listening_ports())]
    running = [
        f"pid {pid}: {line}"
        for pid in processes.all_pids()
        if (line := processes.cmdline(pid))
        and (str(out) in line or any(f"--port {p}" in line for p in ports))
    ]
    return listening + running


def failure(run: DemoRun) -> str:
    return f"the demo exited {run.returncode}:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"


@dataclass(frozen=True)
class SessionDemo:
    """The session's demo run and a copy of its benchmark directory (its two runs, their report
    and charts), taken as it ended: the demo rewrites its directory whole when it runs again."""

    run: DemoRun
    benchmark: Path

    def measured(self) -> Path:
        """The benchmark directory, for a test that reads it (failing as the demo did)."""
        assert self.run.returncode == 0, failure(self.run)
        return self.benchmark


def session_demo(base: Path) -> SessionDemo:
    run = run_demo(base / "demo", MEASURED)
    if run.returncode == 0:
        shutil.copytree(run.out / "benchmark", base / "benchmark")
    return SessionDemo(run, base / "benchmark")
