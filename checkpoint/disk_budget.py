"""Local disk for the files a source stages (Hub downloads): never more than --tmp-limit, nor
than the free space of --tmp-dir less some headroom, at once; a file waits until it fits.
"""

from __future__ import annotations

import contextlib
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

from checkpoint.errors import DiskFullError
from checkpoint.progress import human_bytes
from checkpoint.sources.base import SourceFile


class Stopped(Exception):
    """Another file failed for good: do not start this one."""


class DiskBudget:
    """Bytes of local disk the staged Hub files may take at once; waits for room, never more."""

    def __init__(self, directory: Path, limit: int | None):
        free = shutil.disk_usage(directory).free
        headroom = min(free // 20, 2**30)
        room = max(free - headroom, 0)
        self.directory = directory
        self.capacity = min(limit, room) if limit else room
        self.why = (
            f"--tmp-limit {human_bytes(limit)}"
            if limit and limit <= room
            else f"{human_bytes(free)} free in --tmp-dir {directory}"
        )
        self.used = 0
        self.peak = 0
        self._cond = threading.Condition()

    def check(self, f: SourceFile) -> None:
        if f.size > self.capacity:
            raise DiskFullError(
                f"{f.path} is {human_bytes(f.size)}, more than the {human_bytes(self.capacity)} "
                f"of local disk this upload may use ({self.why}): point --tmp-dir at a volume "
                f"with at least {human_bytes(f.size)} free, or raise --tmp-limit"
            )

    @contextlib.contextmanager
    def reserve(self, f: SourceFile, stop: threading.Event) -> Iterator[None]:
        self.check(f)
        with self._cond:
            while self.used + f.size > self.capacity:
                if stop.is_set():
                    raise Stopped()
                self._cond.wait(0.5)
            self.used += f.size
            self.peak = max(self.peak, self.used)
        try:
            yield
        finally:
            with self._cond:
                self.used -= f.size
                self._cond.notify_all()
