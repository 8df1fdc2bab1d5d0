"""Where a checkpoint comes from: the Hugging Face Hub, a local directory, or S3.

Each source lists its files with their sizes and the checksums it publishes (the Hub publishes
SHA-256 for LFS files and git's blob SHA-1 for the others), and an identity of each file's
content (`source_id`) that the destination object records in its metadata, so that a rerun can
tell, without downloading anything, which objects already hold the right bytes.

  hf://ORG/NAME      --revision <40-hex commit SHA>; token from HF_TOKEN or the file HF_TOKEN_PATH; endpoint HF_ENDPOINT
  /a/local/dir       every regular file below it (.git/ and .cache/huggingface/ left out)
  s3://bucket/prefix copied server-side (no bytes through this machine)

This module holds what they have in common; each has its own: hf.py, local.py, s3.py.
"""

from __future__ import annotations

import contextlib
import fnmatch
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from checkpoint.manifest import MANIFEST_NAME

SOURCE_FORMS = "hf://ORG/NAME, s3://BUCKET/PREFIX or a local directory"


@dataclass(frozen=True)
class SourceFile:
    path: str  # relative, '/'-separated: becomes <prefix>/<path>
    size: int
    source_id: str | None  # content identity published by the source; None: from the bytes
    sha256: str | None = None  # published SHA-256 (hex) the bytes must match
    git_sha1: str | None = None  # published git blob id (hex) the bytes must match
    location: str = ""  # local path or source S3 key


@runtime_checkable
class Source(Protocol):
    uri: str  # recorded in the manifest
    revision: str | None

    def list_files(self) -> list[SourceFile]: ...


@runtime_checkable
class FileSource(Source, Protocol):
    """A source whose files are read from local disk (downloaded first when `stages` is True)."""

    stages: bool

    def fetch(
        self, f: SourceFile, workdir: Path, on_bytes: Callable[[int], None]
    ) -> contextlib.AbstractContextManager[Path]: ...


def select_files(
    files: list[SourceFile], include: tuple[str, ...], exclude: tuple[str, ...]
) -> list[SourceFile]:
    """Files matching any --include pattern (all when none) and no --exclude pattern."""
    chosen = []
    for f in files:
        if f.path == MANIFEST_NAME or f.path.endswith("/" + MANIFEST_NAME):
            continue
        if include and not any(fnmatch.fnmatchcase(f.path, p) for p in include):
            continue
        if any(fnmatch.fnmatchcase(f.path, p) for p in exclude):
            continue
        chosen.append(f)
    return sorted(chosen, key=lambda f: f.path)
