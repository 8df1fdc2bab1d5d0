"""What processes a test's subprocess left behind, read from /proc (Linux): its children, the
members of a process group, the TCP ports listening. The Ctrl-C and demo tests judge by these
what a user would find running after the command ended."""

from __future__ import annotations

import os
import time
from pathlib import Path


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name (state is [0], ppid [1], pgrp [2])."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rpartition(")")[2].split()


def alive(pid: int) -> bool:
    """Running (a zombie is an exit not yet reaped: not running)."""
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z"


def all_pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def children(pid: int) -> list[int]:
    return [p for p in all_pids() if (f := _stat(p)) and int(f[1]) == pid and f[0] != "Z"]


def group(pgid: int) -> list[int]:
    return [p for p in all_pids() if (f := _stat(p)) and int(f[2]) == pgid and f[0] != "Z"]


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def wait_for(predicate, timeout: float, what: str):
    """Poll `predicate` until it returns something truthy; AssertionError naming `what` after
    `timeout` seconds (a bound on a hang, not a measure of speed)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"not within {timeout:g} s: {what}")


def listening_ports() -> set[int]:
    """TCP ports in LISTEN on this machine (IPv4 and IPv6)."""
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == "0A":  # TCP_LISTEN
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def catches_sigint(pid: int) -> bool:
    """The process has its SIGINT handler in place (Python installs it as it starts: before,
    a SIGINT kills it outright, as it would any program)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = next(line for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught.split()[1], 16) & (1 << (2 - 1)))  # SIGINT is signal 2


def threads(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return 0
