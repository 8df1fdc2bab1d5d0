"""Benchmark: `hyperpod-dpd checkpoint upload` against `aws s3 sync` and `s5cmd cp`.

  .venv/bin/python bench/checkpoint_upload.py [--shards 4] [--shard-size 256MiB] [--runs 3]
                                              [--concurrency 16] [--part-size 16MiB]

Generates a checkpoint-shaped data set (a few large shards plus the small JSON files of a
Hugging Face model) in a temp dir, starts a local S3 endpoint (moto on 127.0.0.1, in this
process), then uploads the same data with each tool, interleaved (the order rotates every
run), each run to a fresh prefix, and reports the median of the runs: wall time, client CPU
seconds per GiB (getrusage(RUSAGE_CHILDREN) deltas: every tool, ours included, runs as a child
process), ratios against aws-cli and s5cmd, and a no-op resync (the same command again with
everything in place) with the number of object-writing requests it sent; then the issue's
targets, met or missed, for each of our rows.

aws-cli runs twice per round: as it comes (a CRC32 per part, COMPOSITE), and with
`--checksum-algorithm CRC64NVME`, the full-object checksum ours uses, to show what that
checksum costs the server apart from the tool.

Ours runs three times per round: `--transfer-client auto` (the default; the row names the
client it picked), `crt` and `classic`, each explicitly. Each of our uploads starts with an
empty checksum cache of its own (HYPERPOD_DPD_CHECKSUM_CACHE), so the upload is measured cold
(every file read and hashed) and its resync uses what that upload remembered, as a user's
rerun would. Our modules are byte-compiled first (`compileall`), as an installed package is:
the peers' venv was byte-compiled by pip, and PYTHONDONTWRITEBYTECODE, set in some sandboxes,
would otherwise make every run of ours compile its own modules from source.

The peers come from requirements-bench.txt and requirements-bench-crt.txt, installed into
build/bench-venv and build/bench-venv-crt on first use.
Nothing here is a test: numbers depend on the machine, and moto (one Python process) is the
bottleneck for wall time on a small machine; CPU per GiB is the client's own cost.
"""

from __future__ import annotations

import argparse
import compileall
import hashlib
import json
import logging
import math
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import venv
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import boto3  # noqa: E402
from moto.moto_server.threaded_moto_server import ThreadedMotoServer  # noqa: E402
from moto.moto_server.werkzeug_app import (  # noqa: E402
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.serving import make_server  # noqa: E402

from core.units import parse_byte_size  # noqa: E402

REGION = "us-east-2"
BUCKET = "bench-checkpoints"
# The peers' venvs: requirements file -> venv (each file says why it is a venv of its own).
PEER_VENVS = {
    ROOT / "requirements-bench.txt": ROOT / "build" / "bench-venv",
    ROOT / "requirements-bench-crt.txt": ROOT / "build" / "bench-venv-crt",
}
MiB, GiB = 2**20, 2**30
SAME_CHECKSUM = ("--checksum-algorithm", "CRC64NVME")
AWS_SAME_CHECKSUM = "aws s3 sync " + " ".join(SAME_CHECKSUM)
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "bench",
    "AWS_SECRET_ACCESS_KEY": "bench",
    "AWS_DEFAULT_REGION": REGION,
    "AWS_REGION": REGION,
    "AWS_EC2_METADATA_DISABLED": "true",
}


# -- the local S3 endpoint, counting object writes ------------------------------------------
class _WriteCounter:
    """Counts PUT/POST requests (PutObject, UploadPart, ...) per path, and the server thread's
    CPU time spent in CompleteMultipartUpload (where moto builds an object's checksum)."""

    def __init__(self, app):
        self.app = app
        self.writes: list[tuple[str, float]] = []  # (path, complete CPU s; 0 for others)
        self._lock = threading.Lock()

    def __call__(self, environ, start_response):
        method, path = environ["REQUEST_METHOD"], environ.get("PATH_INFO", "")
        if method not in ("PUT", "POST"):
            return self.app(environ, start_response)
        completing = method == "POST" and "uploadId=" in environ.get("QUERY_STRING", "")
        start = time.thread_time()
        response = self.app(environ, start_response)
        with self._lock:
            self.writes.append((path, time.thread_time() - start if completing else 0.0))
        return response

    def count(self, prefix: str) -> tuple[int, float]:
        """PUT/POST requests under the prefix, and their CompleteMultipartUpload CPU seconds."""
        with self._lock:
            mine = [cpu for path, cpu in self.writes if path.startswith(prefix)]
        return len(mine), sum(mine)


class CountingMotoServer(ThreadedMotoServer):
    def __init__(self):
        super().__init__(ip_address="127.0.0.1", port=0, verbose=False)
        self.counter = _WriteCounter(DomainDispatcherApplication(create_backend_app))

    def _server_entry(self) -> None:
        self._server = make_server(
            self._ip_address, self._port, self.counter, True, request_handler=MotoRequestHandler
        )
        self._server_ready_event.set()
        self._server.serve_forever()

    @property
    def endpoint(self) -> str:
        host, port = self.get_host_and_port()
        return f"http://{host}:{port}"


# -- the peers' venv ----------------------------------------------------------------------------
def bench_venv(requirements: Path) -> Path:
    """The venv of `requirements` (see PEER_VENVS), (re)installed when the file changes."""
    venv_dir = PEER_VENVS[requirements]
    stamp = venv_dir / ".requirements-sha256"
    wanted = hashlib.sha256(requirements.read_bytes()).hexdigest()
    if stamp.exists() and stamp.read_text() == wanted:
        return venv_dir / "bin"
    print(f"installing {requirements.name} into {venv_dir} ...", file=sys.stderr)
    venv.create(venv_dir, with_pip=True, clear=True)
    subprocess.run(
        [venv_dir / "bin" / "python", "-m", "pip", "install", "--quiet", "-r", requirements],
        check=True,
    )
    stamp.write_text(wanted)
    return venv_dir / "bin"


def version(argv: list[str]) -> str:
    out = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, **CREDENTIALS})
    return (out.stdout or out.stderr).strip().split()[0]


# -- the data -------------------------------------------------------------------------------------
def make_dataset(root: Path, shards: int, shard_size: int) -> dict[str, int]:
    """N safetensors-sized shards of random bytes plus a Hugging Face model's small files."""
    sizes = {f"model-{i + 1:05d}-of-{shards:05d}.safetensors": shard_size for i in range(shards)}
    sizes |= {
        "config.json": 1_400,
        "generation_config.json": 200,
        "tokenizer_config.json": 55_000,
        "tokenizer.json": 9 * MiB,
        "model.safetensors.index.json": 60_000,
    }
    root.mkdir(parents=True, exist_ok=True)
    for name, size in sizes.items():
        with (root / name).open("wb") as f:
            left = size
            while left:
                chunk = min(left, 16 * MiB)
                f.write(os.urandom(chunk))
                left -= chunk
    return sizes


# -- the tools -----------------------------------------------------------------------------------
def byte_compile() -> None:
    """checkpoint/__pycache__ (git ignores it), as pip would make on install."""
    compileall.compile_dir(ROOT / "workloads" / "checkpoint", quiet=2)


@dataclass
class Tool:
    name: str
    upload: Callable[[str], list[str]]  # s3 URI -> argv
    resync: Callable[[str], list[str]]
    env: dict[str, str] = field(default_factory=dict)
    ours: bool = False  # prints --json: the client it used, its checksum cache's counters


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
            "--json",
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


@dataclass
class Sample:
    wall: float
    cpu: float  # the tool's process (user + system)
    server_cpu: float  # this process: the moto server's threads while the tool ran
    writes: int = 0
    complete_cpu: float = 0.0  # the server's CPU in this tool's CompleteMultipartUpload calls
    client: str | None = None  # ours: the transfer client it used (--json transferClient)
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
    if "--json" in argv:
        out = json.loads(proc.stdout)
        sample.client = out.get("transferClient")
        cache = out.get("checksumCache") or {}
        sample.cache_hits = cache.get("hits")
        sample.bytes_hashed = cache.get("bytesHashed")
    return sample


def clear(client, prefix: str) -> None:
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
    for page in pages:
        keys = [{"Key": o["Key"]} for o in page.get("Contents", [])]
        if keys:
            client.delete_objects(Bucket=BUCKET, Delete={"Objects": keys, "Quiet": True})


def stored_bytes(client, prefix: str, names: set[str]) -> int:
    total = 0
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
    for page in pages:
        for obj in page.get("Contents", []):
            if obj["Key"].rsplit("/", 1)[-1] in names:
                total += obj["Size"]
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--shard-size", type=parse_byte_size, default=256 * MiB)
    parser.add_argument("--runs", type=int, default=3, help="runs per tool (median; >= 3)")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--part-size", type=parse_byte_size, default=16 * MiB)
    parser.add_argument("--tmp-dir", type=Path, help="where the data set is generated")
    parser.add_argument("--json", type=Path, help="also write the raw samples here")
    args = parser.parse_args(argv)
    if args.runs < 3:
        parser.error("--runs must be at least 3 (the table shows medians)")
    if args.part_size % MiB:
        parser.error("--part-size must be whole MiB (s5cmd takes MiB)")

    bins = [bench_venv(requirements) for requirements in PEER_VENVS]
    bin_dir = bins[0]
    # moto's server logs every request line to stderr from its own threads: CPU taken from
    # every tool alike on a small machine, and noise; errors still show.
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    workdir = Path(tempfile.mkdtemp(prefix="ckpt-bench-", dir=args.tmp_dir))
    server = CountingMotoServer()
    try:
        data = workdir / "checkpoint"
        print(
            f"generating {args.shards} x {args.shard_size // MiB} MiB shards ...", file=sys.stderr
        )
        sizes = make_dataset(data, args.shards, args.shard_size)
        total = sum(sizes.values())
        os.environ.update(CREDENTIALS)  # dummy credentials for the local endpoint only
        byte_compile()
        server.start()
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        client = boto3.client("s3", endpoint_url=server.endpoint, region_name=REGION)
        client.create_bucket(
            Bucket=BUCKET, CreateBucketConfiguration={"LocationConstraint": REGION}
        )
        peers = tools(args, data, server.endpoint, bins, workdir, len(sizes))
        samples: dict[str, list[Sample]] = {t.name: [] for t in peers}
        resyncs: dict[str, list[Sample]] = {t.name: [] for t in peers}
        for i in range(args.runs):
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
                    f"run {i + 1}/{args.runs} {tool.name}: {samples[tool.name][-1].wall:.2f}s, "
                    f"resync {resyncs[tool.name][-1].wall:.2f}s",
                    file=sys.stderr,
                )
        versions = {
            "aws s3 sync": version([str(bin_dir / "aws"), "--version"]),
            "s5cmd cp": version([str(bin_dir / "s5cmd"), "version"]),
        }
        print(report(args, sizes, samples, resyncs, versions))
        if args.json:
            args.json.write_text(
                json.dumps(
                    {
                        "bytes": total,
                        "files": len(sizes),
                        "upload": {k: [vars(s) for s in v] for k, v in samples.items()},
                        "resync": {k: [vars(s) for s in v] for k, v in resyncs.items()},
                        "versions": versions,
                    },
                    indent=2,
                )
            )
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


def report(args, sizes, samples, resyncs, versions) -> str:
    total = sum(sizes.values())
    gib = total / GiB
    aws, s5 = "aws s3 sync", "s5cmd cp"
    W = max(len(name) for name in samples) + 12  # room for " -> classic" and versions

    def med(values: list[Sample], attr: str) -> float:
        return statistics.median(getattr(s, attr) for s in values)

    def label(name: str) -> str:
        if name in versions:
            return f"{name} ({versions[name]})"
        clients = sorted({s.client for s in samples[name] if s.client})
        return f"{name} -> {'/'.join(clients)}" if clients and "auto" in name else name

    wall = {name: med(values, "wall") for name, values in samples.items()}
    cpu = {name: med(values, "cpu") / gib for name, values in samples.items()}
    lines = [
        f"Data: {args.shards} x {args.shard_size // MiB} MiB shards + {len(sizes) - args.shards} "
        f"small files = {total / MiB:.1f} MiB; concurrency {args.concurrency}, part size "
        f"{args.part_size // MiB} MiB; local moto S3 on 127.0.0.1, {os.cpu_count()} CPUs; "
        f"median of {args.runs} interleaved runs",
        "",
        f"{'tool':<{W}} {'wall s':>7} {'MiB/s':>7} {'CPU s/GiB':>10} {'wall/aws':>9} "
        f"{'wall/s5':>8} {'CPU/aws':>8} {'CPU/s5':>7} {'writes':>7} {'server CPU s/GiB':>17} "
        f"{'of which Complete':>18}",
    ]
    for name, values in samples.items():
        lines.append(
            f"{label(name):<{W}} {wall[name]:>7.2f} {total / MiB / wall[name]:>7.1f} "
            f"{cpu[name]:>10.2f} {wall[name] / wall[aws]:>9.2f} {wall[name] / wall[s5]:>8.2f} "
            f"{cpu[name] / cpu[aws]:>8.2f} {cpu[name] / cpu[s5]:>7.2f} "
            f"{med(values, 'writes'):>7.0f} {med(values, 'server_cpu') / gib:>17.2f} "
            f"{med(values, 'complete_cpu') / gib:>18.2f}"
        )
    lines += ["", "No-op resync (the same command again, everything in place):"]
    lines.append(
        f"{'tool':<{W}} {'wall s':>7} {'CPU s':>7} {'writes':>7} {'cache hits':>11} "
        f"{'bytes hashed':>13}"
    )
    for name, values in resyncs.items():
        hits = [s.cache_hits for s in values if s.cache_hits is not None]
        hashed = [s.bytes_hashed for s in values if s.bytes_hashed is not None]
        lines.append(
            f"{'s5cmd sync' if name == s5 else label(name):<{W}} {med(values, 'wall'):>7.2f} "
            f"{med(values, 'cpu'):>7.2f} {med(values, 'writes'):>7.0f} "
            + (
                f"{statistics.median(hits):>11.0f} {statistics.median(hashed):>13.0f}"
                if hits
                else f"{'-':>11} {'-':>13}"
            )
        )
    lines += ["", "Targets (medians):"]
    fastest = min(wall[aws], wall[s5])
    for name in samples:
        if not name.startswith("ours"):
            continue
        noop, noop_writes = med(resyncs[name], "wall"), med(resyncs[name], "writes")
        checks = [
            (
                cpu[name] <= 0.8 * cpu[aws],
                f"CPU {cpu[name]:.2f} s/GiB <= 0.8 x aws {cpu[aws]:.2f} = {0.8 * cpu[aws]:.2f}",
            ),
            (
                wall[name] <= fastest,
                f"wall {wall[name]:.2f} s <= min(aws {wall[aws]:.2f}, s5cmd {wall[s5]:.2f})",
            ),
            (
                noop <= 0.5 and noop_writes == 0,
                f"no-op {noop:.2f} s <= 0.5, {noop_writes:.0f} PUTs",
            ),
        ]
        lines.append(
            f"  {label(name):<{W - 2}} "
            + "; ".join(
                f"({i}) {'met' if ok else 'MISSED'}: {text}"
                for i, (ok, text) in enumerate(checks, 1)
            )
        )
    if AWS_SAME_CHECKSUM in wall:
        same = wall[AWS_SAME_CHECKSUM]
        lines += [
            "",
            f"At the same integrity ({AWS_SAME_CHECKSUM}: a full-object CRC64NVME, as ours; "
            "not a target; its aws-cli has awscrt, which CRC64NVME needs and which also changes "
            f"how it signs): aws {same:.2f} s wall, {cpu[AWS_SAME_CHECKSUM]:.2f} CPU s/GiB; "
            + ", ".join(
                f"{label(n)} {wall[n] / same:.2f}x" for n in samples if n.startswith("ours")
            )
            + " of its wall time.",
        ]
    lines += [
        "",
        "writes: PUT/POST requests (PutObject, UploadPart, Create/CompleteMultipartUpload). Ours "
        "also hashes every file (CRC64NVME), reads every object's checksum back and writes a "
        "manifest; its no-op rerun HEADs every object and takes unchanged local files' checksums "
        "from its cache (size, mtime, ctime, inode), the others compare size and mtime. Over "
        "this plain-http endpoint the classic clients (ours classic, aws-cli) sign every payload "
        "(SHA-256 of the body), the CRT client sends it unsigned (aws-chunked, checksum trailer). "
        "server CPU: the local moto server's own work for the same bytes (it decodes aws-chunked "
        "bodies, which the CRT client sends, in Python): wall time against moto on a small "
        "machine largely measures the server. Checksums: aws-cli sends a CRC32 per part and gets "
        "a COMPOSITE checksum; ours and aws-cli --checksum-algorithm CRC64NVME a full-object "
        "CRC64NVME; s5cmd none (moto, like S3, then records a full-object CRC64NVME). moto builds "
        "a full-object checksum at CompleteMultipartUpload from two more copies of the whole "
        "object, a composite one from the parts' CRCs: 'of which Complete' is the server "
        "threads' CPU in those calls.",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
