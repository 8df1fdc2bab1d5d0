"""The temp directory a run stages Hub downloads in, under --tmp-dir, and what killed runs left.

Each run's directory holds a lock file, flock()ed for as long as the run lives: the kernel
releases it when the process ends, however it ends (kill -9 included). A directory whose lock
can be taken belongs to no live run: it is deleted before the next run measures the free space
(its files would count against the disk budget, run after run, in an emptyDir that outlives the
container).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
import time
from pathlib import Path

PREFIX = "hyperpod-dpd-"
LOCK = ".lock"
# A directory without its lock file is either being created this instant or was left by a run
# killed between the two steps: only the latter is this old.
UNLOCKED_GRACE_SECONDS = 600


class Workdir:
    """A new staging directory, locked until close()."""

    def __init__(self, tmp_dir: Path | None):
        parent = Path(tmp_dir) if tmp_dir is not None else Path(tempfile.gettempdir())
        remove_stale(parent)
        self.path = Path(tempfile.mkdtemp(prefix=PREFIX, dir=parent))
        self._fd: int | None = os.open(self.path / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self._fd, fcntl.LOCK_EX)

    def close(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def remove_stale(parent: Path) -> list[Path]:
    """Delete the staging directories under `parent` that no live run holds; those deleted."""
    removed = []
    try:
        entries = [e for e in os.scandir(parent) if e.name.startswith(PREFIX)]
    except OSError:
        return removed
    for entry in entries:
        with contextlib.suppress(OSError):
            if entry.is_dir(follow_symlinks=False) and not _held(Path(entry.path)):
                shutil.rmtree(entry.path, ignore_errors=True)
                removed.append(Path(entry.path))
    return removed


def _held(directory: Path) -> bool:
    """Whether a live run holds `directory` (or may be creating it)."""
    try:
        fd = os.open(directory / LOCK, os.O_RDWR)
    except FileNotFoundError:
        return time.time() - directory.stat().st_mtime < UNLOCKED_GRACE_SECONDS
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # releases our lock too, if we took it
    return False
