"""`hyperpod-dpd demo` (`make demo`) for real: the fake servers, aiperf and a real Prometheus,
run twice in a row, each run succeeding, showing the commands docs/benchmark.md shows and
leaving nothing running or listening; interrupted with a real SIGINT, it stops every server it
started."""

from __future__ import annotations

import re
import signal
import subprocess
import sys

import pytest

from core.exits import EXIT_INTERRUPTED
from tests.conftest import ROOT
from tests.hyperpod_dpd.demo.runs import (
    QUICK,
    URL,
    DemoRun,
    failure,
    left_behind,
    ports_in,
    run_demo,
)
from tests.support import processes

pytestmark = [pytest.mark.long, pytest.mark.xdist_group("aiperf")]  # it runs aiperf


def test_the_demo_runs_twice_in_a_row_and_leaves_nothing_running(demo_run):
    """The session's run (whose benchmark the compare and measure tests read) is the first; the
    second runs in the same directory here."""
    _succeeded(demo_run.run, 1)
    _succeeded(run_demo(demo_run.run.out, QUICK), 2)


def _succeeded(run: DemoRun, attempt: int) -> None:
    assert run.returncode == 0, f"run {attempt}: {failure(run)}"
    # The benchmark: both runs, compared.
    assert (run.out / "benchmark" / "report" / "report.md").read_text().startswith("#")
    for label in ("colocated", "dpd"):
        assert (run.out / "benchmark" / label / "results.json").exists()
    # The canary: its verdicts on both candidates, and their text as a user reads it.
    verdicts = "canary: healthy candidate: promote (exit 0); failing candidate: rollback (exit 1)"
    assert verdicts in run.stdout
    assert run.stdout.count("verdict: promote") == 1 == run.stdout.count("verdict: rollback")
    assert len(run.ports) == 4, run.ports  # two fake servers, two Prometheus servers
    assert run.left_behind == [], f"run {attempt}"
    _docs_show(run)


def _docs_show(run: DemoRun) -> None:
    """The block in docs/benchmark.md is what the demo prints with its defaults (ports, the
    output directory and the test's shorter load aside): the demo as documented is the demo
    that runs."""
    printed = [line[2:] for line in run.stdout.splitlines() if line.startswith("$ ")]
    printed = [line for line in printed if " benchmark " in line]
    ports: dict[str, str] = {}
    for line in printed:
        for port in URL.findall(line) + re.findall(r"--port (\d+)", line):
            ports.setdefault(port, f"PORT{len(ports) + 1}")

    def as_documented(line: str) -> str:
        line = line.replace(str(run.out), "build/demo")
        line = line.replace(" ".join(run.flags), "--concurrency 4,8,16 --duration 10")
        return re.sub(r"\b(\d{4,5})\b", lambda m: ports.get(m[1], m[1]), line)

    docs = (ROOT / "docs" / "benchmark.md").read_text()
    block = docs.split("<!-- the demo's commands", 1)[1].split("```sh\n", 1)[1].split("```")[0]
    assert [as_documented(line) for line in printed] == block.strip().splitlines()


def test_ctrl_c_stops_every_server_the_demo_started(tmp_path):
    out = tmp_path / "demo"
    argv = [sys.executable, "-m", "hyperpod_dpd.cli", "demo", "--out", str(out),
            "--concurrency", "4", "--duration", "30"]  # fmt: skip
    demo = subprocess.Popen(argv, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    seen = []
    try:
        for line in demo.stdout:  # until the load runs against the first server
            seen.append(line)
            if line.startswith("benchmark D("):
                break
        processes.wait_for(
            lambda: any("aiperf" in processes.cmdline(p) for p in processes.all_pids()),
            120, "aiperf started",
        )  # fmt: skip
        demo.send_signal(signal.SIGINT)
        rest, err = demo.communicate(timeout=120)
    finally:
        demo.kill()
        demo.wait()
    output = "".join(seen) + rest
    assert demo.returncode == EXIT_INTERRUPTED, output + err
    ports = ports_in(output)
    assert len(ports) == 2, output
    assert left_behind(out, ports) == []
    assert not [p for p in processes.all_pids() if str(out) in processes.cmdline(p)]
