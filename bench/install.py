"""The set-up of `make`: .venv from requirements-dev.txt (the hashed lock) with pip, the peer,
against what the Makefile does (uv from requirements-uv.txt by pip, then `uv pip sync`), each
from a cold download cache and from a warm one, interleaved.

  python -m bench.install [--runs 3]

Cold: each run gets an empty cache directory of its own (PIP_CACHE_DIR, UV_CACHE_DIR), so every
wheel is downloaded again, as on a fresh machine. Warm: the cache the previous cold run left.
Prints each figure's median, min and max and the ratio pip / uv; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements-dev.txt"
UV_LOCK = ROOT / "requirements-uv.txt"


def _pip(venv: Path) -> list[str]:
    return [str(venv / "bin" / "python"), "-m", "pip", "--quiet", "--disable-pip-version-check"]


def install_with_pip(venv: Path, env: dict[str, str]) -> None:
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=env)
    pip = [*_pip(venv), "install", "--require-hashes", "-r", str(LOCK)]
    subprocess.run(pip, check=True, env=env)


def install_with_uv(venv: Path, env: dict[str, str]) -> None:
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=env)
    pip = [*_pip(venv), "install", "--require-hashes", "--no-deps", "-r", str(UV_LOCK)]
    subprocess.run(pip, check=True, env=env)
    sync = [str(venv / "bin" / "uv"), "pip", "sync", "--quiet", "--require-hashes"]
    sync += ["--python", str(venv / "bin" / "python"), str(LOCK)]
    subprocess.run(sync, check=True, env=env)


def timed(install, venv: Path, cache: Path) -> float:
    """Seconds of one install into a new `venv`, with its download caches in `cache`."""
    env = {**os.environ, "PIP_CACHE_DIR": str(cache / "pip"), "UV_CACHE_DIR": str(cache / "uv")}
    started = time.perf_counter()
    try:
        install(venv, env)
        return time.perf_counter() - started
    finally:
        shutil.rmtree(venv, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.install")
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args(argv)
    tools = {"pip": install_with_pip, "uv": install_with_uv}
    walls: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(args.runs):
            for name, install in tools.items():  # interleaved: drift hits both alike
                cache = Path(tmp) / f"cache-{name}-{n}"
                for state in ("cold", "warm"):
                    wall = timed(install, Path(tmp) / "venv", cache)
                    walls.setdefault((name, state), []).append(wall)
                    print(f"run {n + 1} {name} {state}: {wall:.1f} s", file=sys.stderr)
    packages = sum(1 for line in LOCK.read_text().splitlines() if line[:1].isalnum())
    print(f".venv from {LOCK.name} ({packages} packages), {args.runs} runs each:")
    for state in ("cold", "warm"):
        medians = {}
        for name in tools:
            values = walls[(name, state)]
            medians[name] = statistics.median(values)
            print(
                f"  {state:4} {name:3}: median {medians[name]:6.1f} s "
                f"(min {min(values):.1f}, max {max(values):.1f})"
            )
        print(f"  {state:4} pip / uv: {medians['pip'] / medians['uv']:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
