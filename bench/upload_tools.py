"""The tools under test and the argv each runs with: ours (`python -m checkpoint upload`, once
per transfer client), `aws s3 sync` (as it comes, and with ours' CRC64NVME) and `s5cmd`, the
peers installed into venvs of their own."""

from __future__ import annotations

import compileall
import math
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bench.fake_checkpoint import MiB
from bench.local_s3 import CREDENTIALS, REGION
from hyperpod_dpd.shared.venvs import venv_from

ROOT = Path(__file__).resolve().parents[1]
# The peers' venvs: requirements file -> venv (each file says why it is a venv of its own).
PEER_VENVS = {
    ROOT / "bench" / "requirements.txt": ROOT / "build" / "bench-venv",
    ROOT / "bench" / "requirements-crt.txt": ROOT / "build" / "bench-venv-crt",
}
SAME_CHECKSUM = ("--checksum-algorithm", "CRC64NVME")
AWS_SAME_CHECKSUM = "aws s3 sync " + " ".join(SAME_CHECKSUM)


def bench_venv(requirements: Path) -> Path:
    """The bin/ of the venv of `requirements` (see PEER_VENVS), (re)built when the lock changes."""
    return venv_from(requirements, PEER_VENVS[requirements]) / "bin"


def version(argv: list[str]) -> str:
    out = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, **CREDENTIALS})
    return (out.stdout or out.stderr).strip().split()[0]


def byte_compile() -> None:
    """checkpoint/__pycache__ (git ignores it), as pip would make on install."""
    compileall.compile_dir(ROOT / "checkpoint", quiet=2)


@dataclass
class Tool:
    name: str
    upload: Callable[[str], list[str]]  # s3 URI -> argv
    resync: Callable[[str], list[str]]
    env: dict[str, str] = field(default_factory=dict)
    ours: bool = False  # prints --format json: the client it used, its checksum cache's counters


def tools(
    args, data: Path, endpoint: str, bins: list[Path], workdir: Path, files: int
) -> list[Tool]:
    bin_dir, crt_bin_dir = bins
    part_mib = args.part_size // MiB

    def ours(client: str) -> Callable[[str], list[str]]:
        return lambda uri: [
            sys.executable,
            "-m",
            "checkpoint",
            "upload",
            "--source",
            str(data),
            "--dest",
            uri,
            "--endpoint-url",
            endpoint,
            "--region",
            REGION,
            "--concurrency",
            str(args.concurrency),
            "--part-size",
            str(args.part_size),
            "--transfer-client",
            client,
            "--progress",
            "none",
            "--format",
            "json",
        ]

    aws_config = workdir / "aws-config"
    aws_config.write_text(
        f"[default]\nregion = {REGION}\ns3 =\n"
        f"  max_concurrent_requests = {args.concurrency}\n"
        f"  multipart_threshold = {part_mib}MB\n"
        f"  multipart_chunksize = {part_mib}MB\n"
    )

    def aws(*flags: str, bin_dir: Path = bin_dir) -> Callable[[str], list[str]]:
        def argv(uri: str) -> list[str]:
            cmd = [str(bin_dir / "aws"), "s3", "sync", str(data), uri, "--endpoint-url", endpoint]
            return [*cmd, *flags, "--only-show-errors", "--no-progress"]

        return argv

    aws_env = {"AWS_CONFIG_FILE": str(aws_config), "AWS_SHARED_CREDENTIALS_FILE": "/dev/null"}

    # s5cmd: --numworkers files at once, --concurrency parts per file: about as many requests
    # in flight as the others' --concurrency.
    per_file = max(1, math.ceil(args.concurrency / min(args.concurrency, files)))
    s5 = [str(bin_dir / "s5cmd"), "--endpoint-url", endpoint, "--numworkers", str(args.concurrency)]
    parts = ["--concurrency", str(per_file), "--part-size", str(part_mib)]
    return [
        Tool("ours (auto)", ours("auto"), ours("auto"), ours=True),
        Tool("ours (crt)", ours("crt"), ours("crt"), ours=True),
        Tool("ours (classic)", ours("classic"), ours("classic"), ours=True),
        Tool("aws s3 sync", aws(), aws(), aws_env),
        # The same integrity as ours: a full-object CRC64NVME (aws-cli's default is a CRC32
        # of each part, COMPOSITE). Not a target peer; it tells the checksum's cost from ours.
        Tool(
            AWS_SAME_CHECKSUM,
            aws(*SAME_CHECKSUM, bin_dir=crt_bin_dir),
            aws(*SAME_CHECKSUM, bin_dir=crt_bin_dir),
            aws_env,
        ),
        Tool(
            "s5cmd cp",
            lambda uri: [*s5, "cp", *parts, f"{data}/*", f"{uri}/"],
            lambda uri: [*s5, "sync", *parts, f"{data}/", f"{uri}/"],
        ),
    ]
