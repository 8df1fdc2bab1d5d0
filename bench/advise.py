"""Benchmark: one `hyperpod-dpd advise` over the whole grid for one workload.

  .venv/bin/python -m bench.advise [--runs 3] [--max-nodes 4] [--instance-type ml.p5.48xlarge]

The scenario of AWS's published DPD benchmark (Llama 3.3 70B, 4096 in / 256 out, concurrency
8/16/32; TPOT <= 15 ms) over every layout within --max-nodes (26 layouts x 3 levels = 78
predictions at 4 nodes on H100), run as a user runs it (a child process, the chart included),
`--runs` times; prints the median, min and max wall seconds against the target (30 s on 2 cores,
the advise venv built: `make advise-venv` first). Numbers, not assertions: they depend on the machine.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 30.0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.advise")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--max-nodes", type=int, default=4)
    p.add_argument("--instance-type", default="ml.p5.48xlarge")
    args = p.parse_args(argv)
    walls = []
    with tempfile.TemporaryDirectory() as tmp:
        argv_run = [
            sys.executable, "-m", "hyperpod_dpd.cli", "advise", "--instance-type", args.instance_type,
            "--isl", "4096", "--osl", "256", "--concurrency", "8,16,32", "--tpot-ms", "15",
            "--max-nodes", str(args.max_nodes), "--chart", str(Path(tmp) / "frontier.png"),
        ]  # fmt: skip
        for n in range(args.runs):
            started = time.monotonic()
            subprocess.run(
                argv_run, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            walls.append(time.monotonic() - started)
            print(f"run {n + 1}: {walls[-1]:.1f} s", file=sys.stderr)
    median = statistics.median(walls)
    verdict = "met" if median < TARGET_S else "missed"
    print(f"advise over the grid (--max-nodes {args.max_nodes}, {args.instance_type}): median "
          f"{median:.1f} s, min {min(walls):.1f}, max {max(walls):.1f} ({args.runs} runs); "
          f"target < {TARGET_S:g} s: {verdict}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
