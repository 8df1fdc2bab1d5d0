"""Benchmark: `make test`, part by part, and a fresh clone's CI run (`.ci/run`), with medians.

  .venv/bin/python -m bench.suite [--runs 3] [--clone-runs 1] [--slowest 15] [--skip-clone]

`make test` here: each of its parts run as the Makefile runs it, `--runs` times, interleaved:
`make tools`, `make lint` (ruff, import contracts, Pulumi.yaml's config block, actionlint), the
policy pack and the tool venvs (`make policy-pack loadtest-venv advise-venv scan-venv`: on a
machine that has them, the cost of finding out nothing changed), and the suite (`pytest` as
`make test` starts it, every worker). Each row: the median, min and max wall seconds and the
median CPU seconds (user + system of the part and every process it waited for), so a busy
neighbour shows as wall time well above CPU / cores.

Then `--slowest` tests by CPU seconds from the last suite run (bench/pytest_cpu.py records
them), and each part's target: `make test` within 120 s on 2 cores.

A fresh clone (`--clone-runs`, default 1; `--skip-clone` leaves it out): `git clone` of this
checkout's HEAD (committed work only) into a temporary directory, then its `.ci/run` as CI runs
it: no .venv and no build/ (the tool venvs, the policy pack, actionlint and the suite's caches
such as the simulator's answers, tests/support/simulator_cache.py, all made from nothing); the download
caches (uv's, npm's) as this machine has them. Target: 180 s. `.ci/run` installs Prometheus with
apt-get first where promtool is missing: that is timed too, but not on a machine that has it.

The load average before and after each run is printed: numbers from a busy machine are upper
bounds. Nothing here is a test: numbers, never assertions.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAKE_TEST_MAX_SECONDS = 120.0
CI_RUN_MAX_SECONDS = 180.0


@dataclass
class Part:
    name: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    samples: list[tuple[float, float]] = field(default_factory=list)  # (wall, cpu)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(argv: list[str], cwd: Path, env: dict[str, str], log: Path) -> tuple[float, float]:
    """Wall and CPU seconds of `argv` (and every process it waited for); SystemExit if it fails."""
    cpu, start = _children_cpu(), time.perf_counter()
    with log.open("w") as out:
        done = subprocess.run(argv, cwd=cwd, env={**os.environ, **env}, stdout=out,
                              stderr=subprocess.STDOUT, check=False)  # fmt: skip
    wall = time.perf_counter() - start
    if done.returncode != 0:
        tail = log.read_text()[-3000:]
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}); its log ends:\n{tail}")
    return wall, _children_cpu() - cpu


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.1f} (5 min {five:.1f}) on {os.cpu_count()} cores"


def make_test_parts(cpu_log: Path) -> list[Part]:
    make = ["make", "--no-print-directory"]
    pytest = [str(ROOT / ".venv" / "bin" / "pytest"), "-p", "bench.pytest_cpu"]
    return [
        Part("make tools", [*make, "tools"]),
        Part("make lint", [*make, "lint"]),
        Part(
            "policy pack + tool venvs",
            [*make, "policy-pack", "loadtest-venv", "advise-venv", "scan-venv"],
        ),
        # As `make test` starts it (bytecode caches allowed), with the CPU of each test recorded.
        Part(
            "pytest (the suite)",
            ["env", "-u", "PYTHONDONTWRITEBYTECODE", *pytest],
            {"BENCH_TEST_CPU": str(cpu_log), "PYTHONPATH": str(ROOT)},
        ),
    ]


def bench_make_test(runs: int, work: Path) -> tuple[list[Part], Path]:
    cpu_log = work / "test-cpu"
    parts = make_test_parts(cpu_log)
    for n in range(runs):
        for old in work.glob("test-cpu.*"):
            old.unlink()  # the last run's per-test figures are the ones shown
        for part in parts[n % len(parts) :] + parts[: n % len(parts)]:  # rotated each round
            print(f"[{n + 1}/{runs}] {part.name} ({_load()})", file=sys.stderr, flush=True)
            part.samples.append(run_once(part.argv, ROOT, part.env, work / "part.log"))
    return parts, cpu_log


def per_test(cpu_log: Path) -> tuple[dict[str, float], dict[str, float]]:
    """CPU and wall seconds of each test (setup, call and teardown together), from
    bench/pytest_cpu.py's records of the last suite run."""
    cpu: dict[str, float] = defaultdict(float)
    wall: dict[str, float] = defaultdict(float)
    for path in cpu_log.parent.glob(cpu_log.name + ".*"):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            cpu[record["nodeid"]] += record["cpu"]
            wall[record["nodeid"]] += record["wall"]
    return cpu, wall


def slowest(cpu_log: Path, count: int) -> list[tuple[float, float, str]]:
    """(CPU s, wall s, test) of the `count` tests that cost the most CPU."""
    cpu, wall = per_test(cpu_log)
    ranked = sorted(cpu, key=cpu.__getitem__, reverse=True)[:count]
    return [(cpu[t], wall[t], t) for t in ranked]


def bench_fresh_clone(runs: int, work: Path) -> list[tuple[float, float]]:
    samples = []
    for n in range(runs):
        clone = work / f"clone-{n}"
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
        print(f"[{n + 1}/{runs}] fresh clone .ci/run ({_load()})", file=sys.stderr, flush=True)
        try:
            samples.append(run_once([str(clone / ".ci" / "run")], clone, {}, work / "ci.log"))
        finally:
            shutil.rmtree(clone, ignore_errors=True)
    return samples


def _row(name: str, samples: list[tuple[float, float]]) -> str:
    walls = [w for w, _ in samples]
    cpu = statistics.median(c for _, c in samples)
    return (f"{name:<28} {statistics.median(walls):>9.1f} {min(walls):>7.1f} {max(walls):>7.1f}"
            f" {cpu:>7.1f}")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.suite", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--runs", type=int, default=3, help="rounds of make test's parts")
    parser.add_argument("--clone-runs", type=int, default=1, help="fresh-clone .ci/run runs")
    parser.add_argument("--skip-clone", action="store_true", help="no fresh-clone run")
    parser.add_argument("--slowest", type=int, default=15, help="tests shown by CPU seconds")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.clone_runs < 1:
        parser.error("--runs and --clone-runs: at least 1")
    print(f"bench.suite: {_load()} at the start", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="bench-suite-") as tmp:
        work = Path(tmp)
        parts, cpu_log = bench_make_test(args.runs, work)
        ranked = slowest(cpu_log, args.slowest)
        tests_cpu, _ = per_test(cpu_log)
        clone = [] if args.skip_clone else bench_fresh_clone(args.clone_runs, work)
    print(f"\n`make test` by part, {args.runs} run(s) each ({_load()} at the end):")
    print(f"{'part':<28} {'median s':>9} {'min s':>7} {'max s':>7} {'CPU s':>7}")
    for part in parts:
        print(_row(part.name, part.samples))
    total = [tuple(map(sum, zip(*s, strict=True))) for s in zip(*(p.samples for p in parts),
                                                                  strict=True)]  # fmt: skip
    print(_row("make test (sum)", total))
    print(f"\n{len(tests_cpu)} tests, {sum(tests_cpu.values()):.1f} s CPU in their setup, call "
          "and teardown (last run; the rest of the suite's CPU is the workers' start-up and "
          "collection)")  # fmt: skip
    print(f"the {len(ranked)} tests that cost the most CPU (last run; setup + call + teardown):")
    for cpu, wall, test in ranked:
        print(f"  {cpu:6.1f} s CPU {wall:6.1f} s wall  {test}")
    if clone:
        print(f"\nfresh clone, {len(clone)} run(s):")
        print(_row(".ci/run", clone))
    print("\ntargets:")
    make_test = statistics.median(w for w, _ in total)
    print(f"  {'met   ' if make_test <= MAKE_TEST_MAX_SECONDS else 'MISSED'} make test within "
          f"{MAKE_TEST_MAX_SECONDS:.0f} s: {make_test:.1f} s")  # fmt: skip
    if clone:
        ci = statistics.median(w for w, _ in clone)
        print(f"  {'met   ' if ci <= CI_RUN_MAX_SECONDS else 'MISSED'} fresh clone .ci/run "
              f"within {CI_RUN_MAX_SECONDS:.0f} s: {ci:.1f} s")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
