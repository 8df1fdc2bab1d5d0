"""Progress of a long loop on one live line: rewritten in place on a terminal (a bar and the
item), and on a pipe or a log a plain line at each tenth of the way, so a log holds a handful
of lines instead of one per item."""

from __future__ import annotations

import shutil
import sys
from typing import TextIO

BAR = 24


class Progress:
    def __init__(self, what: str, stream: TextIO | None = None) -> None:
        self.what = what
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty()
        self.shown = -1  # the tenth last printed (pipes)

    def update(self, done: int, total: int, item: str) -> None:
        if total <= 0:
            return
        if self.live:
            filled = BAR * done // total
            line = f"{self.what}: [{'#' * filled}{'.' * (BAR - filled)}] {done}/{total} {item}"
            width = shutil.get_terminal_size((80, 24)).columns - 1
            self.stream.write("\r" + line[:width].ljust(width))
            if done == total:
                self.stream.write("\n")
        else:
            tenth = done * 10 // total
            if tenth == self.shown and done != total:
                return
            self.shown = tenth
            self.stream.write(f"{self.what}: {done}/{total} ({done * 100 // total}%) {item}\n")
        self.stream.flush()

    def say(self, line: str) -> None:
        """A line that is not progress (a warning): on its own line, the live one after it."""
        if self.live:
            self.stream.write("\r\x1b[K")
        self.stream.write(line if line.endswith("\n") else line + "\n")
        self.stream.flush()
