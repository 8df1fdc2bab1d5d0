"""The directories the commands fill and refill (`plan --out`, `policy-pack --out`).

A command rewrites its output directory on every run: stale files of an earlier run (the
manifest of an object since removed, a rule since deleted) must not linger. It therefore removes
what it wrote before, and only that: a directory holding anything else (a home directory, a
source folder, another command's output) is refused with exit 2 naming the flag, and nothing in
it is touched. What a command writes is a fixed set of names, so a directory it wrote before is
recognized by its contents alone: nothing to leave behind, nothing for an older version to lack.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from settings import ConfigError, ConfigProblem

SHOWN = 4  # foreign names quoted in the refusal; the rest are counted


def _refusal(flag: str, out: Path, allowed: str, fix: str) -> ConfigError:
    return ConfigError([ConfigProblem(flag, str(out), allowed, fix)], source="command line")


def claim(out: Path, owned: Iterable[str], what: str, flag: str = "--out") -> Path:
    """`out`, made if missing and proved writable; ConfigError naming `flag` when it cannot be
    made or written, or when it holds a name outside `owned` (what `what` writes there)."""
    owned = frozenset(owned)
    allowed = f"a new or empty directory, or one {what} wrote before"
    try:
        out.mkdir(parents=True, exist_ok=True)
        foreign = sorted(child.name for child in out.iterdir() if child.name not in owned)
        probe = out / ".hyperpod-dpd-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        raise _refusal(flag, out, allowed, f"give another {flag} ({why})") from None
    if foreign:
        named = ", ".join(foreign[:SHOWN])
        more = f" and {len(foreign) - SHOWN} more" if len(foreign) > SHOWN else ""
        raise _refusal(
            flag, out, allowed,
            f"it holds {named}{more}, which {what} does not write ({what} rewrites its "
            f"directory whole): give a new directory as {flag}; nothing in {out} was touched",
        )  # fmt: skip
    return out


def clear(out: Path, owned: Iterable[str], keep: Iterable[str] = ()) -> None:
    """Remove from `out` the names of `owned` (what the command wrote before), except `keep`.
    A link is removed, never followed."""
    keep = frozenset(keep)
    for name in sorted(frozenset(owned) - keep):
        child = out / name
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        elif child.is_symlink() or child.exists():
            child.unlink()


@contextmanager
def removed_unless_finished(out: Path) -> Iterator[None]:
    """Remove `out`, and the parents made for it, when the block does not finish (Ctrl-C, an
    error): a directory the command had only begun is not left behind looking like output.
    What existed before the block is left as it was."""
    new = None  # the outermost directory of `out`'s path that does not exist yet
    for directory in (out, *out.parents):
        if directory.exists() or directory.is_symlink():
            break
        new = directory
    try:
        yield
    except BaseException:
        if new is not None:
            shutil.rmtree(new, ignore_errors=True)
        raise
