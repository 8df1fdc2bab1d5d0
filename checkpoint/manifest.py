"""The manifest: one JSON object under the prefix, written last. Its presence means "complete".

`<prefix>/.hyperpod-dpd-manifest.json` lists every file of the checkpoint with its size, the
CRC64NVME checksum S3 holds for the object, the SHA-256 the source published (Hugging Face LFS
files) and the source's identity of the content. Readers (the endpoint's model loader,
`checkpoint verify`) trust the manifest and nothing else: an upload that changes any object
deletes the manifest first and writes a new one only after every object has been verified.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from botocore.exceptions import ClientError

from checkpoint.errors import ManifestError
from checkpoint.s3.errors import error_code

MANIFEST_NAME = ".hyperpod-dpd-manifest.json"
FORMAT = "hyperpod-dpd/checkpoint-manifest/v1"
CHECKSUM_ALGORITHM = "CRC64NVME"
_B64_CRC64 = re.compile(r"^[A-Za-z0-9+/]{11}=$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


def manifest_key(prefix: str) -> str:
    """`models/llama/abc` -> `models/llama/abc/.hyperpod-dpd-manifest.json`."""
    prefix = prefix.strip("/")
    return f"{prefix}/{MANIFEST_NAME}" if prefix else MANIFEST_NAME


@dataclass(frozen=True)
class ManifestFile:
    path: str  # relative to the prefix, '/'-separated
    size: int
    crc64nvme: str  # base64, as S3 reports ChecksumCRC64NVME
    source_id: str  # the source's identity of the content, e.g. "sha256:<hex>"
    sha256: str | None = None  # hex; published by the source and checked, when it has one
    version_id: str | None = None  # S3 version of the object (versioned buckets)

    def to_json(self) -> dict[str, Any]:
        doc = {
            "path": self.path,
            "size": self.size,
            "crc64nvme": self.crc64nvme,
            "sourceId": self.source_id,
            "sha256": self.sha256,
        }
        if self.version_id:
            doc["versionId"] = self.version_id
        return doc

    def same_content(self, other: ManifestFile) -> bool:
        return (self.path, self.size, self.crc64nvme, self.source_id, self.sha256) == (
            other.path,
            other.size,
            other.crc64nvme,
            other.source_id,
            other.sha256,
        )


@dataclass(frozen=True)
class Manifest:
    source: str  # hf://org/model, s3://bucket/prefix, or the local directory
    revision: str | None
    files: tuple[ManifestFile, ...]
    created: str = field(default_factory=lambda: datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "files", tuple(sorted(self.files, key=lambda f: f.path)))

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)

    def same_checkpoint(self, other: Manifest) -> bool:
        """Same source, revision, filters and file contents (the creation time aside)."""
        if (self.source, self.revision, self.include, self.exclude) != (
            other.source,
            other.revision,
            other.include,
            other.exclude,
        ):
            return False
        mine = {f.path: f for f in self.files}
        theirs = {f.path: f for f in other.files}
        return mine.keys() == theirs.keys() and all(mine[p].same_content(theirs[p]) for p in mine)

    def to_json(self) -> bytes:
        doc = {
            "format": FORMAT,
            "source": self.source,
            "revision": self.revision,
            "created": self.created,
            "checksumAlgorithm": CHECKSUM_ALGORITHM,
            "include": list(self.include),
            "exclude": list(self.exclude),
            "fileCount": len(self.files),
            "totalBytes": self.total_bytes,
            "files": [f.to_json() for f in self.files],
        }
        return (json.dumps(doc, indent=2) + "\n").encode()

    @classmethod
    def from_json(cls, data: bytes, where: str) -> Manifest:
        """Parse and check a manifest; `where` names it in errors (s3://bucket/key)."""
        try:
            doc = json.loads(data)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ManifestError(f"{where} is not valid JSON ({exc}): {_REDO}") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            found = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
            raise ManifestError(
                f"{where} is not a hyperpod-dpd manifest (format {found!r}, expected {FORMAT!r}): "
                f"{_REDO}"
            )
        try:
            files = tuple(_file_from_json(f) for f in doc["files"])
            manifest = cls(
                source=str(doc["source"]),
                revision=doc.get("revision"),
                files=files,
                created=str(doc["created"]),
                include=tuple(doc.get("include", ())),
                exclude=tuple(doc.get("exclude", ())),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ManifestError(
                f"{where} has a missing or malformed field ({exc}): {_REDO}"
            ) from None
        paths = [f.path for f in files]
        if len(set(paths)) != len(paths):
            raise ManifestError(f"{where} lists a file twice: {_REDO}")
        return manifest


_REDO = "rerun `hyperpod-dpd checkpoint upload` with the same source to rewrite it"


def _file_from_json(doc: dict[str, Any]) -> ManifestFile:
    if not isinstance(doc, dict):
        raise TypeError(f"a file entry must be an object, not {type(doc).__name__}")
    path, size, crc = doc["path"], doc["size"], doc["crc64nvme"]
    if not isinstance(path, str) or not path or path.startswith("/") or ".." in path.split("/"):
        raise ValueError(f"bad path {path!r}")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise ValueError(f"bad size {size!r} for {path}")
    if not isinstance(crc, str) or not _B64_CRC64.match(crc):
        raise ValueError(f"bad crc64nvme {crc!r} for {path}")
    sha256 = doc.get("sha256")
    if sha256 is not None and (not isinstance(sha256, str) or not _HEX64.match(sha256)):
        raise ValueError(f"bad sha256 {sha256!r} for {path}")
    return ManifestFile(
        path=path,
        size=size,
        crc64nvme=crc,
        source_id=str(doc["sourceId"]),
        sha256=sha256,
        version_id=doc.get("versionId"),
    )


def read_manifest(client, bucket: str, prefix: str) -> Manifest | None:
    """The manifest under the prefix, or None when there is none (an incomplete checkpoint)."""
    key = manifest_key(prefix)
    try:
        body = client.get_object(Bucket=bucket, Key=key)["Body"].read()
    except ClientError as exc:
        if error_code(exc) in ("NoSuchKey", "404", "NotFound"):
            return None
        raise
    return Manifest.from_json(body, f"s3://{bucket}/{key}")


def write_manifest(client, bucket: str, prefix: str, manifest: Manifest) -> str | None:
    """PUT the manifest (with its own CRC64NVME checksum); returns its version id, if any."""
    response = client.put_object(
        Bucket=bucket,
        Key=manifest_key(prefix),
        Body=manifest.to_json(),
        ContentType="application/json",
        ChecksumAlgorithm=CHECKSUM_ALGORITHM,
    )
    return response.get("VersionId")


def delete_manifest(client, bucket: str, prefix: str) -> None:
    client.delete_object(Bucket=bucket, Key=manifest_key(prefix))
