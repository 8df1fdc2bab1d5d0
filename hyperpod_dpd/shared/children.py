"""Child processes a command starts and owns: each in a process group of its own, ended with
everything it started when the command stops early (Ctrl-C, SIGTERM, an error).

Ctrl-C on a terminal sends SIGINT to the whole foreground process group, but a child busy in
native code (the simulator's pandas and pyarrow imports, a load generator's worker processes)
may take its time to notice, or not notice at all when the signal reached the parent alone
(`kill -INT <pid>`, a CI runner's cancel). The parent, which sees KeyboardInterrupt, ends the
child's group itself (`stop`) and waits for it, so nothing the command started outlives it.

That needs the parent to know the child: an interrupt that lands while `subprocess.Popen` is
still starting it (the child runs, Popen has not returned it yet) would leave a child no one
stops. `start` holds SIGINT and SIGTERM back while it starts one (in the main thread, where
Python runs signal handlers): one that came meanwhile stops the new child, then is delivered.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

GRACE_SECONDS = 5.0
HELD_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def start(argv: list[str], **popen: Any) -> subprocess.Popen:
    """`subprocess.Popen(argv, **popen)` in a new session (its own process group), started
    whole or not at all: an interrupt while it starts stops it, then reaches the caller."""
    came: list[int] = []
    held: dict[int, Any] = {}
    proc = None
    try:
        try:
            _hold(held, came)
            proc = subprocess.Popen(argv, start_new_session=True, **popen)
        finally:
            _put_back(list(held.items()))  # a signal that comes now raises, proc known
        for sig in dict.fromkeys(came):
            signal.raise_signal(sig)  # the caller's own handler (Ctrl-C: KeyboardInterrupt)
    except BaseException:
        if proc is not None:
            stop(proc)
        raise
    return proc


def _hold(held: dict[int, Any], came: list[int]) -> None:
    """Hold back the signals a handler of Python's own would act on, noting them in `came`;
    the handlers they replaced in `held`, each kept before it is replaced. Nothing is held
    outside the main thread (Python runs handlers in the main thread alone), nor a signal left
    at its default or ignored (no handler of ours would run)."""
    if threading.current_thread() is not threading.main_thread():
        return
    try:
        for sig in HELD_SIGNALS:
            handler = signal.getsignal(sig)
            if callable(handler):
                held[sig] = handler
                signal.signal(sig, lambda number, _frame: came.append(number))
    except BaseException:  # a signal not yet held, its own handler raising: all back first
        _put_back(list(held.items()))
        raise


def _put_back(handlers: list[tuple[int, Any]]) -> None:
    """Each handler back, every one of them even if one that is back already raises (a signal
    can land between any two steps, in whichever thread the system hands it to)."""
    if handlers:
        (sig, handler), rest = handlers[0], handlers[1:]
        try:
            signal.signal(sig, handler)
        finally:
            _put_back(rest)


def stop(proc: subprocess.Popen, grace: float = GRACE_SECONDS) -> None:
    """End `proc` and its process group and reap it: SIGINT first (a Python child then undoes
    what it began, as on Ctrl-C, and ends its own children; servers shut down cleanly), SIGTERM
    after `grace` seconds, SIGKILL after as many again."""
    for sig, wait in ((signal.SIGINT, grace), (signal.SIGTERM, grace), (signal.SIGKILL, None)):
        with suppress(ProcessLookupError):  # the group is gone already
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
        with suppress(ProcessLookupError, PermissionError):  # a grandchild that outlived it
            os.killpg(proc.pid, signal.SIGKILL)
        return


@contextmanager
def owned(argv: list[str], **popen: Any) -> Iterator[subprocess.Popen]:
    """A child started by `start`, stopped with its group when the block is left by any
    exception (KeyboardInterrupt included); on a normal exit the caller has waited for it."""
    proc = start(argv, **popen)
    try:
        yield proc
    except BaseException:
        stop(proc)
        raise
