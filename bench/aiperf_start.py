"""Benchmark: what one aiperf level costs the machine that runs the load, started as `benchmark
run` starts a run of one level (hyperpod_dpd/benchmark/loadgen.py PRELOAD + START: the
tokenizer's code imported before aiperf forks its services) against aiperf's own console script
(the peer: each service imports it after the fork). A sweep starts each level in a fresh
interpreter (START alone), which this does not measure.

  .venv/bin/python -m bench.aiperf_start [--runs 5] [--duration 1]

Both load the same local fake server (hyperpod_dpd/benchmark/fake_server.py) with the same
flags, one level for `--duration` seconds, `--runs` times, interleaved (the order alternates
every round, so a noisy neighbour slows both alike). The table shows the median, min and max
CPU seconds of aiperf and every process it started (getrusage(RUSAGE_CHILDREN) deltas) and the
median wall seconds, then the ratio of the medians. Numbers, not assertions.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

from hyperpod_dpd.benchmark.loadgen import ROOT, LoadRun, command, loadtest_venv
from hyperpod_dpd.benchmark.scenario import StopRule, parse_scenario
from hyperpod_dpd.demo.prometheus import free_port

TOKENIZER = ROOT / "hyperpod_dpd" / "benchmark" / "word_tokenizer"


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _server(venv: Path, port: int) -> subprocess.Popen:
    argv = [str(venv / "bin" / "python"), "-m", "hyperpod_dpd.benchmark.fake_server",
            "--port", str(port), "--first-token-ms", "20", "--tpot-ms", "5"]  # fmt: skip
    server = subprocess.Popen(argv, cwd=ROOT, env={"PYTHONPATH": str(ROOT)},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    for _ in range(300):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=1):
                return server
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise SystemExit("the fake server did not answer in 30 s")


def _once(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """CPU and wall seconds of one aiperf run (and of every process it started)."""
    cpu, start = _cpu(), time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"aiperf failed ({done.returncode}):\n{done.stdout[-3000:]}")
    return _cpu() - cpu, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--duration", type=float, default=1.0)
    args = parser.parse_args()
    venv = loadtest_venv()
    port = free_port()
    server = _server(venv, port)
    samples: dict[str, list[tuple[float, float]]] = {"benchmark run (PRELOAD)": [], "aiperf": []}
    try:
        with tempfile.TemporaryDirectory(prefix="bench-aiperf-") as tmp:
            load = LoadRun(f"http://127.0.0.1:{port}", TOKENIZER, "fake-llm",
                           parse_scenario("D(1024,32)"), [4], StopRule(duration=args.duration),
                           Path(tmp) / "artifacts")  # fmt: skip
            ours, env = command(load, venv)
            peer = [str(venv / "bin" / "aiperf"), *ours[3:]]  # the same flags
            argvs = {"benchmark run (PRELOAD)": ours, "aiperf": peer}
            for round_ in range(args.runs):
                order = list(argvs) if round_ % 2 == 0 else list(reversed(argvs))
                for name in order:
                    samples[name].append(_once(argvs[name], env))
    finally:
        server.terminate()
        server.wait(timeout=10)
    print(f"one aiperf level of {args.duration:g} s at concurrency 4, {args.runs} runs each")
    print(f"{'started as':<24}{'CPU s median':>14}{'min':>8}{'max':>8}{'wall s median':>15}")
    medians = {}
    for name, runs in samples.items():
        cpu = [c for c, _ in runs]
        medians[name] = statistics.median(cpu)
        wall = statistics.median(w for _, w in runs)
        print(f"{name:<24}{medians[name]:>14.2f}{min(cpu):>8.2f}{max(cpu):>8.2f}{wall:>15.2f}")
    ratio = medians["benchmark run (PRELOAD)"] / medians["aiperf"]
    print(f"CPU ratio (PRELOAD / aiperf's own script): {ratio:.2f}")


if __name__ == "__main__":
    main()
