"""Progress on stderr: bytes done, bytes/s and ETA per phase (download, upload, copy, check).

On a terminal one line is redrawn in place a few times a second; otherwise (a Kubernetes Job's
log, a CI log) a plain line is printed every `interval` seconds and once at the end, so logs
stay readable. Thread-safe: transfer threads call `add()` concurrently.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TextIO

MODES = ("auto", "tty", "plain", "none")
RATE_WINDOW_S = 10.0


def human_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def human_duration(seconds: float | None) -> str:
    if seconds is None:
        return "--:--"
    seconds = round(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:d}:{secs:02d}"


@dataclass
class _Counter:
    total: int
    start: float
    done: int = 0
    samples: deque = field(default_factory=deque)  # (time, done) over the rate window

    def rate(self, now: float) -> float | None:
        """Bytes/s over the last RATE_WINDOW_S seconds; the average since the start while the
        window is shorter than a second; None before any time has passed."""
        while len(self.samples) > 1 and now - self.samples[1][0] >= RATE_WINDOW_S:
            self.samples.popleft()
        t0, d0 = self.samples[0]
        if now - t0 >= 1.0:
            return (self.done - d0) / (now - t0)
        return self.done / (now - self.start) if now > self.start else None


class Progress:
    """Counters named by phase, e.g. Progress({"download": n, "upload": n}, files=30)."""

    def __init__(
        self,
        phases: dict[str, int],
        *,
        files: int,
        stream: TextIO | None = None,
        mode: str = "auto",
        interval: float = 15.0,
        clock: Callable[[], float] = time.monotonic,
    ):
        if mode not in MODES:
            raise ValueError(f"progress mode must be one of {', '.join(MODES)}, not {mode!r}")
        self.stream = stream if stream is not None else sys.stderr
        if mode == "auto":
            mode = "tty" if getattr(self.stream, "isatty", lambda: False)() else "plain"
        self.mode = mode
        self.interval = interval if mode == "plain" else 0.25
        self.clock = clock
        self.files_total = files
        self.files_done = 0
        self._lock = threading.Lock()
        self._start = clock()
        self._counters = {name: _Counter(total, self._start) for name, total in phases.items()}
        for counter in self._counters.values():
            counter.samples.append((self._start, 0))
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_len = 0

    # -- updates (any thread) --------------------------------------------------------------
    def add(self, phase: str, nbytes: int) -> None:
        with self._lock:
            counter = self._counters[phase]
            counter.done += nbytes
            now = self.clock()
            if now - counter.samples[-1][0] >= 0.2:
                counter.samples.append((now, counter.done))

    def file_done(self) -> None:
        with self._lock:
            self.files_done += 1

    # -- rendering -------------------------------------------------------------------------
    def render(self) -> str:
        """One status line: `upload 1.2 GiB/2.8 GiB 310.5 MiB/s | ETA 0:05 | files 3/8`."""
        with self._lock:
            now = self.clock()
            parts, etas = [], []
            for name, c in self._counters.items():
                rate = c.rate(now)
                shown = f"{human_bytes(rate)}/s" if rate is not None else "-- B/s"
                parts.append(f"{name} {human_bytes(c.done)}/{human_bytes(c.total)} {shown}")
                remaining = max(c.total - c.done, 0)
                if remaining == 0:
                    etas.append(0.0)
                elif rate:
                    etas.append(remaining / rate)
                else:
                    etas.append(None)
            total = sum(c.total for c in self._counters.values())
            done = sum(min(c.done, c.total) for c in self._counters.values())
            fraction = done / total if total else 1.0
            eta = None if any(e is None for e in etas) else max(etas, default=0.0)
            bar_width = 20
            filled = int(fraction * bar_width)
            bar = "#" * filled + "." * (bar_width - filled)
            elapsed = human_duration(now - self._start)
            return (
                f"[{bar}] {fraction * 100:5.1f}% | "
                + " | ".join(parts)
                + f" | ETA {human_duration(eta)} | elapsed {elapsed}"
                + f" | files {self.files_done}/{self.files_total}"
            )

    def _emit(self, final: bool = False) -> None:
        line = self.render()
        if self.mode == "tty":
            pad = max(self._last_len - len(line), 0)
            self.stream.write("\r" + line + " " * pad + ("\n" if final else ""))
            self._last_len = len(line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._emit()

    def start(self) -> Progress:
        if self.mode != "none" and self._thread is None:
            self._thread = threading.Thread(target=self._run, name="progress", daemon=True)
            self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
            self._emit(final=True)

    def __enter__(self) -> Progress:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()
