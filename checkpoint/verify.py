"""Re-check a staged checkpoint against its manifest.

Every file of the manifest must exist with the manifest's size and the CRC64NVME that S3
reports for the object (HeadObject with ChecksumMode: nothing is downloaded). `deep=True` also
downloads each object and recomputes CRC64NVME and, where the manifest has one, SHA-256: it
catches what a HEAD cannot, at the cost of reading the whole checkpoint.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import boto3
from botocore.exceptions import FlexibleChecksumError

from checkpoint.errors import VerifyFailed
from checkpoint.hashing import digest_chunks
from checkpoint.manifest import Manifest, ManifestFile, manifest_key, read_manifest
from checkpoint.progress import human_bytes
from checkpoint.s3.client import bucket_client, default_session
from checkpoint.s3.destination import Destination
from checkpoint.s3.errors import s3_error
from checkpoint.s3.uri import parse_s3_uri


@dataclass(frozen=True)
class Problem:
    path: str
    key: str
    what: str

    def __str__(self) -> str:
        return f"{self.key}: {self.what}"


@dataclass
class VerifyReport:
    dest: str
    manifest: Manifest
    problems: list[Problem] = field(default_factory=list)
    extras: list[str] = field(default_factory=list)
    deep: bool = False

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        m = self.manifest
        how = "downloaded and rehashed" if self.deep else "size and CRC64NVME from S3"
        head = (
            f"{self.dest}: {len(m.files)} objects, {human_bytes(m.total_bytes)} "
            f"({m.source}" + (f"@{m.revision}" if m.revision else "") + f"; {how})"
        )
        if self.ok:
            return f"OK {head}: all match the manifest"
        lines = [f"FAILED {head}: {len(self.problems)} objects do not match the manifest"]
        lines += [f"  {p}" for p in self.problems]
        return "\n".join(lines)


def verify_checkpoint(
    dest: str,
    *,
    endpoint_url: str | None = None,
    region: str | None = None,
    deep: bool = False,
    concurrency: int = 16,
    session: boto3.session.Session | None = None,
) -> VerifyReport:
    """Check every object of the manifest under `dest`; VerifyFailed when there is no manifest."""
    location = parse_s3_uri(dest, "--dest")
    session = session or default_session()
    client = bucket_client(
        session,
        location.bucket,
        "--dest",
        region=region,
        endpoint_url=endpoint_url,
        concurrency=concurrency,
    )
    try:
        manifest = read_manifest(client, location.bucket, location.prefix)
    except Exception as exc:
        raise s3_error(exc, "read the manifest under", location.uri) from None
    if manifest is None:
        raise VerifyFailed(
            f"no manifest at s3://{location.bucket}/{manifest_key(location.prefix)}: the "
            "checkpoint is incomplete (an upload was interrupted or failed) or was never staged; "
            "run `hyperpod-dpd checkpoint upload` with its source to finish it"
        )
    destination = Destination(client, location)

    def check(f: ManifestFile) -> Problem | None:
        key = location.key(f.path)
        state = destination.head(key)
        if state is None:
            return Problem(f.path, key, "missing")
        if state.size != f.size:
            return Problem(f.path, key, f"size {state.size}, the manifest says {f.size}")
        if state.crc64nvme is None:
            return Problem(
                f.path, key, "S3 holds no CRC64NVME checksum for it (overwritten by another tool?)"
            )
        if state.crc64nvme != f.crc64nvme:
            return Problem(
                f.path, key, f"CRC64NVME {state.crc64nvme}, the manifest says {f.crc64nvme}"
            )
        if deep:
            return _deep_check(client, location.bucket, key, f)
        return None

    with ThreadPoolExecutor(max(1, min(concurrency, len(manifest.files), 32))) as pool:
        problems = [p for p in pool.map(check, manifest.files) if p is not None]
    wanted = {location.key(f.path) for f in manifest.files} | {manifest_key(location.prefix)}
    extras = sorted(k for k in destination.list_keys() if k not in wanted)
    return VerifyReport(location.uri, manifest, problems, extras, deep)


def _deep_check(client, bucket: str, key: str, f: ManifestFile) -> Problem | None:
    try:
        body = client.get_object(Bucket=bucket, Key=key)["Body"]
        digest = digest_chunks(
            iter(lambda: body.read(8 * 2**20), b""), size=f.size, sha256=f.sha256 is not None
        )
    except ValueError as exc:
        return Problem(f.path, key, f"download ended early: {exc}")
    except FlexibleChecksumError as exc:  # botocore checks the bytes against S3's checksum
        return Problem(f.path, key, f"content does not match the checksum S3 holds ({exc})")
    except Exception as exc:
        raise s3_error(exc, "download", f"s3://{bucket}/{key}") from None
    if digest.crc64nvme != f.crc64nvme:
        return Problem(
            f.path,
            key,
            f"content has CRC64NVME {digest.crc64nvme}, the manifest says {f.crc64nvme}",
        )
    if f.sha256 and digest.sha256 != f.sha256:
        return Problem(
            f.path, key, f"content has SHA-256 {digest.sha256}, the manifest says {f.sha256}"
        )
    return None
