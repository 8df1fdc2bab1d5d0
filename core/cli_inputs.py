"""What a command-line value may be, checked where argparse reads it: every command's paths, URLs,
stack names and numbers pass through these types (the `hyperpod-dpd` commands and the staging
program's alike), so bad input ends in argparse's exit 2 naming the flag, never a traceback.

Each type raises argparse.ArgumentTypeError with what was given, what is allowed and the fix;
argparse prefixes the flag ("argument --project-dir: ..."). Standard library only: the staging
Job ships this module.
"""

from __future__ import annotations

import argparse
import math
import os
import re
from pathlib import Path
from urllib.parse import urlsplit

from core.images import ImageRefError, parse_image
from core.problems import ConfigProblem
from core.regions import REGION_PATTERN

# Pulumi's rule for stack names (pulumi/pkg/backend: "stack names may only contain
# alphanumerics, hyphens, underscores, or periods"), at most 100 characters.
STACK_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")
_SYSTEM = ("/proc", "/sys", "/dev")  # kernel files: never a project, an input or an output


def _bad(value: str, allowed: str, fix: str) -> argparse.ArgumentTypeError:
    # argparse names the flag itself ("argument --out: ..."): the problem's sentence follows.
    return argparse.ArgumentTypeError(ConfigProblem("", value, allowed, fix).sentence())


def _path(value: str, what: str) -> Path:
    if not value or "\x00" in value:
        raise _bad(value, what, "give a path")
    try:
        path = Path(value)
        resolved = path.resolve()
        os.fsencode(str(path))  # a name the file system can hold (no lone surrogates)
    except (OSError, RuntimeError, UnicodeError, ValueError) as exc:
        raise _bad(value, what, f"give another path ({type(exc).__name__})") from None
    if any(str(resolved) == s or str(resolved).startswith(s + "/") for s in _SYSTEM):
        raise _bad(value, what, "give a path outside /proc, /sys and /dev")
    return path


def project_dir(value: str) -> Path:
    """A directory holding Pulumi.yaml (the project)."""
    path = _path(value, "the directory of Pulumi.yaml")
    try:
        ok = path.is_dir() and (path / "Pulumi.yaml").is_file()
    except OSError:
        ok = False
    if not ok:
        raise _bad(
            value,
            "a directory holding Pulumi.yaml",
            "point --project-dir at the project's directory, or leave it out (found from the "
            "working directory)",
        )
    return path


def stack_name(value: str) -> str:
    """A Pulumi stack name: letters, digits, '-', '_', '.' (never a path)."""
    if not STACK_NAME.match(value) or value in (".", ".."):
        raise _bad(
            value,
            "letters, digits, '-', '_' and '.', at most 100 characters (Pulumi's rule for stack "
            "names)",
            "give the stack's name, e.g. dev (it reads Pulumi.dev.yaml)",
        )
    return value


def _writable_parent(path: Path) -> bool:
    """The nearest existing ancestor is a directory this user may write in."""
    for parent in (path.parent, *path.parent.parents):
        try:
            if parent.exists():
                return parent.is_dir() and os.access(parent, os.W_OK | os.X_OK)
        except OSError:
            return False
    return False


def output_file(value: str) -> Path:
    """A file to write: not a directory, in a directory that exists and is writable."""
    path = _path(value, "a file path in a writable directory")
    try:
        is_dir, parent_ok = path.is_dir(), path.parent.is_dir()
        writable = parent_ok and os.access(path.parent, os.W_OK | os.X_OK)
    except OSError:
        is_dir, writable = False, False
    if is_dir or not writable:
        why = "it is a directory" if is_dir else f"{path.parent} is no writable directory"
        raise _bad(value, "a file path in a writable directory", f"give another ({why})")
    return path


def output_dir(value: str) -> Path:
    """A directory to create or write in."""
    path = _path(value, "a directory this user can create or write")
    try:
        exists, is_dir = path.exists(), path.is_dir()
    except OSError:
        exists, is_dir = True, False
    if (exists and not (is_dir and os.access(path, os.W_OK | os.X_OK))) or (
        not exists and not _writable_parent(path)
    ):
        raise _bad(value, "a directory this user can create or write", "give another")
    return path


def input_path(value: str) -> Path:
    """A file or directory that exists and can be read."""
    path = _path(value, "an existing file or directory")
    try:
        ok = path.exists() and os.access(path, os.R_OK)
    except OSError:
        ok = False
    if not ok:
        raise _bad(value, "an existing file or directory this user can read", "check the path")
    return path


def input_file(value: str) -> Path:
    """A regular file that exists and can be read."""
    path = input_path(value)
    if not path.is_file():
        raise _bad(value, "a file (not a directory)", "give the file's path")
    return path


def http_url(value: str) -> str:
    """An http(s) URL with a host (and a valid port, if any)."""
    try:
        parts = urlsplit(value)
        port_ok = parts.port is None or 0 < parts.port < 65536
    except ValueError:  # a malformed IPv6 host or a port that is no number
        parts, port_ok = None, False
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or not port_ok:
        raise _bad(value, "an http:// or https:// URL with a host", "e.g. http://127.0.0.1:8000")
    return value


def finite_float(value: str) -> float:
    """A number that is neither NaN nor infinite (the command checks its range)."""
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        raise _bad(value, "a finite number", "e.g. 5")
    return number


def aws_region(value: str) -> str:
    """An AWS Region name (botocore refuses anything else with an error of its own)."""
    if not re.match(REGION_PATTERN, value):
        raise _bad(value, "an AWS Region name such as us-east-2", "e.g. --region us-east-2")
    return value


def image_reference(value: str) -> str:
    """An image reference as the stacks take it: repo:tag, or pinned repo:tag@sha256:<64 hex>."""
    try:
        parse_image(value)
    except ImageRefError as exc:
        fix = f"give {exc.suggestion}" if exc.suggestion else "give repo:tag or repo:tag@sha256:..."
        raise _bad(value, str(exc), fix) from None
    return value


# A Prometheus duration of one unit (its `[0-9]+(ms|s|m|h|d|w|y)` grammar, narrowed to what a
# window or a pause needs): what `--window` and `--interval` take.
DURATION = re.compile(r"^[1-9][0-9]{0,5}[smhd]$")
DURATION_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def duration(value: str) -> str:
    """A Prometheus duration such as 30m, 2h or 1d (kept as text: PromQL takes it as is)."""
    if not DURATION.match(value):
        raise _bad(value, "a duration such as 90s, 30m, 2h or 1d", "e.g. 30m")
    return value


def duration_seconds(value: str) -> int:
    """The seconds of a duration `duration` accepted."""
    return int(value[:-1]) * DURATION_SECONDS[value[-1]]


def weight_steps(value: str) -> tuple[int, ...]:
    """A candidate's weight steps, in percent: increasing whole numbers ending at 100."""
    allowed = "whole percentages from 1 to 100, comma-separated, increasing, the last 100"
    try:
        steps = tuple(int(part) for part in value.split(","))
    except ValueError:
        steps = ()
    if (
        not steps
        or any(not 0 < s <= 100 for s in steps)
        or list(steps) != sorted(set(steps))
        or steps[-1] != 100
    ):
        raise _bad(value, allowed, "e.g. 5,25,50,100")
    return steps
