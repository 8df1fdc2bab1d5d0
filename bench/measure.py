"""Measurement: one tool's run as a child process (wall time, its CPU and the server's meanwhile,
what ours reports in --format json), and the interleaved rounds of upload plus no-op resync per tool."""

from __future__ import annotations

import json
import re
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from bench.local_s3 import BUCKET, CountingMotoServer, clear, stored_bytes
from bench.upload_tools import ROOT, Tool


@dataclass
class Sample:
    wall: float
    cpu: float  # the tool's process (user + system)
    server_cpu: float  # this process: the moto server's threads while the tool ran
    writes: int = 0
    complete_cpu: float = 0.0  # the server's CPU in this tool's CompleteMultipartUpload calls
    client: str | None = None  # ours: the transfer client it used (--format json: transferClient)
    cache_hits: int | None = None  # ours: files whose checksum came from the cache
    bytes_hashed: int | None = None  # ours: bytes of local files read to hash them


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def run(argv: list[str], env: dict[str, str]) -> Sample:
    """Wall seconds and CPU seconds of one child process, and of the server meanwhile."""
    child, server = _cpu(resource.RUSAGE_CHILDREN), _cpu(resource.RUSAGE_SELF)
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    sample = Sample(
        wall, _cpu(resource.RUSAGE_CHILDREN) - child, _cpu(resource.RUSAGE_SELF) - server
    )
    if proc.returncode != 0:
        raise SystemExit(f"{argv[0]} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    if "--format" in argv and argv[argv.index("--format") + 1] == "json":
        out = json.loads(proc.stdout)
        sample.client = out.get("transferClient")
        cache = out.get("checksumCache") or {}
        sample.cache_hits = cache.get("hits")
        sample.bytes_hashed = cache.get("bytesHashed")
    return sample


def interleaved_runs(
    runs: int,
    peers: list[Tool],
    server: CountingMotoServer,
    client,
    env: dict[str, str],
    workdir: Path,
    sizes: dict[str, int],
) -> tuple[dict[str, list[Sample]], dict[str, list[Sample]]]:
    """Each tool's upload and resync samples over `runs` rounds: the order rotates every round,
    each upload goes to a fresh prefix, checked for every byte, then emptied."""
    total = sum(sizes.values())
    samples: dict[str, list[Sample]] = {t.name: [] for t in peers}
    resyncs: dict[str, list[Sample]] = {t.name: [] for t in peers}
    for i in range(runs):
        order = peers[i % len(peers) :] + peers[: i % len(peers)]
        for tool in order:
            slug = re.sub(r"[^a-z0-9]+", "-", tool.name.lower()).strip("-")
            prefix = f"run{i}/{slug}"
            uri = f"s3://{BUCKET}/{prefix}"
            tool_env = {**env, **tool.env}
            if tool.ours:  # a cold cache for the upload, what it remembered for the resync
                tool_env["HYPERPOD_DPD_CHECKSUM_CACHE"] = str(workdir / "cache" / prefix)
            for argv, into in ((tool.upload(uri), samples), (tool.resync(uri), resyncs)):
                writes, completing = server.counter.count(f"/{BUCKET}/{prefix}/")
                sample = run(argv, tool_env)
                now = server.counter.count(f"/{BUCKET}/{prefix}/")
                sample.writes, sample.complete_cpu = now[0] - writes, now[1] - completing
                into[tool.name].append(sample)
                if (got := stored_bytes(client, f"{prefix}/", set(sizes))) != total:
                    raise SystemExit(f"{tool.name} stored {got} bytes of {total}")
            clear(client, f"{prefix}/")
            print(
                f"run {i + 1}/{runs} {tool.name}: {samples[tool.name][-1].wall:.2f}s, "
                f"resync {resyncs[tool.name][-1].wall:.2f}s",
                file=sys.stderr,
            )
    return samples, resyncs
