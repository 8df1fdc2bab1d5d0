"""A local directory as a source: every regular file below it, read where it is (not staged)."""

from __future__ import annotations

import contextlib
import fnmatch
import os
from collections.abc import Callable
from pathlib import Path

from checkpoint.errors import SourceError
from checkpoint.sources.base import SOURCE_FORMS, SourceFile

LOCAL_EXCLUDES = (".git/*", ".cache/huggingface/*")


class LocalSource:
    stages = False

    def __init__(self, directory: str, revision: str | None = None):
        path = Path(directory).expanduser()
        try:
            exists, is_dir = path.exists(), path.is_dir()
        except OSError as exc:  # a name the file system refuses (too long, ...)
            raise SourceError(
                f"--source {directory[:80]}: {exc.strerror} (expected {SOURCE_FORMS})"
            ) from None
        if not exists:
            raise SourceError(f"--source {directory}: no such directory (expected {SOURCE_FORMS})")
        if not is_dir:
            raise SourceError(
                f"--source {directory} is a file, not a directory of checkpoint files"
            )
        self.root = path.resolve()
        self.uri = str(self.root)
        self.revision = revision

    def list_files(self) -> list[SourceFile]:
        files = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames.sort()
            for name in sorted(filenames):
                full = Path(dirpath) / name
                rel = full.relative_to(self.root).as_posix()
                if any(fnmatch.fnmatchcase(rel, p) for p in LOCAL_EXCLUDES):
                    continue
                try:
                    st = full.stat()  # follows symlinks (a Hugging Face cache snapshot is links)
                except OSError as exc:
                    raise SourceError(f"cannot read {full}: {exc.strerror}") from None
                if not full.is_file():
                    continue
                files.append(
                    SourceFile(path=rel, size=st.st_size, source_id=None, location=str(full))
                )
        return files

    def fetch(
        self, f: SourceFile, workdir: Path, on_bytes: Callable[[int], None]
    ) -> contextlib.AbstractContextManager[Path]:
        return contextlib.nullcontext(Path(f.location))
