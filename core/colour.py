"""Colour in the commands' text output: on a terminal only, never under NO_COLOR or on a pipe.

The convention of https://no-color.org: "Command-line software which adds ANSI color to its
output by default should check for a NO_COLOR environment variable that, when present and not an
empty string (regardless of its value), prevents the addition of ANSI color." A stream that is
not a terminal (a pipe, a file, a CI log) and TERM=dumb get none either. JSON output is never
painted: only text renderers take a Palette.
"""

from __future__ import annotations

import os
from typing import TextIO

_CODES = {"red": "31", "green": "32", "yellow": "33", "bold": "1"}


def enabled(stream: TextIO) -> bool:
    """Whether text written to `stream` may carry ANSI colour."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


class Palette:
    """Paints text for one stream; every method returns its text unchanged when colour is off."""

    def __init__(self, stream: TextIO | None = None, on: bool | None = None) -> None:
        self.on = enabled(stream) if on is None and stream is not None else bool(on)

    def _paint(self, code: str, text: str) -> str:
        return f"\x1b[{_CODES[code]}m{text}\x1b[0m" if self.on and text else text

    def red(self, text: str) -> str:
        return self._paint("red", text)

    def green(self, text: str) -> str:
        return self._paint("green", text)

    def yellow(self, text: str) -> str:
        return self._paint("yellow", text)

    def bold(self, text: str) -> str:
        return self._paint("bold", text)


PLAIN = Palette(on=False)
