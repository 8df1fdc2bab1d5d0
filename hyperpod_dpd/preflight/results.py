"""What each preflight check reports: its name, pass | FAIL | warn, the detail, and for every
FAIL what to change."""

from __future__ import annotations

from dataclasses import dataclass

PASS, FAIL, WARN = "pass", "FAIL", "warn"


@dataclass(frozen=True)
class Check:
    name: str
    result: str  # pass | FAIL | warn
    detail: str
    fix: str = ""  # what to change, for every FAIL
