"""The benchmark's table: medians of upload and no-op resync per tool, ratios against aws-cli and
s5cmd, the issue's targets met or missed for each of our rows, and what the columns mean."""

from __future__ import annotations

import os
import statistics

from bench.fake_checkpoint import GiB, MiB
from bench.measure import Sample
from bench.upload_tools import AWS_SAME_CHECKSUM


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
