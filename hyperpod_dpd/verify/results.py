"""What `verify` judges and what it hands back: the target endpoint, one `Check` per documented
step, and the `Report` whose exit code the CLI returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hyperpod_dpd.verify.causes import Cause

PASS, FAIL, SKIP = "pass", "FAIL", "skip"
# An exposure the stack cannot close (the operator's own load balancer): said with its cause and
# what to do, but the exit code stays 0, so a check no user can pass does not fail every run.
WARN = "warn"


@dataclass(frozen=True)
class Check:
    name: str
    result: str  # pass | FAIL | skip | warn
    detail: str
    cause: str = ""
    fix: str = ""
    ref: str = ""

    @classmethod
    def ok(cls, name: str, detail: str) -> Check:
        return cls(name, PASS, detail)

    @classmethod
    def skipped(cls, name: str, detail: str) -> Check:
        return cls(name, SKIP, detail)

    @classmethod
    def failed(cls, check: str, detail: str, cause: Cause, /, **context: Any) -> Check:
        """A failed check; `context` fills the cause's placeholders ({name}, {pod}, ...)."""
        c = cause.format(**context)
        return cls(check, FAIL, detail, c.cause, c.fix, c.ref)

    @classmethod
    def warned(cls, check: str, detail: str, cause: Cause, /, **context: Any) -> Check:
        """A known exposure the stack cannot close: reported like a failure, exit code 0."""
        c = cause.format(**context)
        return cls(check, WARN, detail, c.cause, c.fix, c.ref)


@dataclass(frozen=True)
class StagedCopy:
    """The checkpoint copy the stack stages for the endpoint (endpoints.<key>.checkpoint, else
    the stack's), which its IEC's spec.modelSourceConfig must load."""

    stack: str
    key: str  # the config key that sets it: hyperpod-dpd:endpoints.<key>.checkpoint or ...
    prefix: str  # effective prefix, no leading or trailing '/'
    revision: str  # source@revision, what the prefix means
    bucket: str | None  # None: not known here (`bucket_note` says why); only the prefix is judged
    bucket_note: str = ""
    # Every copy the stack stages: prefix -> "source@revision (endpoints ...)", to say which
    # revision another prefix means.
    copies: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Split:
    """The traffic split in front of the endpoint (front_door.py): the URL clients call (None:
    not known here, `note` says why) and the stack whose API key it takes."""

    url: str | None
    stack: str = ""
    note: str = ""


@dataclass(frozen=True)
class Target:
    name: str
    namespace: str
    routing_threshold: int | None = None  # explicit: wins over the IEC's value
    fallback_threshold: int | None = None  # the stack's value, if the IEC has none
    # A colocated endpoint of the stack: only its router's Service (and the copy it loads) is
    # checked (the DPD checks do not apply; the traffic split binds to that Service in either
    # mode).
    colocated: bool = False
    # The stack gives the endpoint a NetworkPolicy (networkPolicy.enabled): its selector is
    # checked against the worker pods' labels.
    network_policy: bool = False
    staged: StagedCopy | None = None  # with --stack: the copy the endpoint must load
    split: Split | None = None  # the endpoint is behind the stack's split (or --traffic-url)
    # With --stack: the model's other doors are tried (doors.py). The namespaces the routers'
    # NetworkPolicy admits; None: the stack gives the routers none (networkPolicy.enabled false).
    doors: bool = False
    router_clients: tuple[str, ...] | None = None

    @property
    def router_prefix(self) -> str:
        return f"{self.name}-{self.namespace}-router-"

    def container(self, role: str) -> str:
        return f"{role}-{self.name}"


@dataclass
class Report:
    target: Target
    threshold: int
    threshold_source: str
    prompts_via: str
    checks: list[Check] = field(default_factory=list)
    # What the live IEC loads: its spec.modelSourceConfig.modelLocation, the staged copy's prefix
    # (models/<org>/<model>/<revision> by default): which revision this endpoint serves.
    model_location: str = ""

    @property
    def exit_code(self) -> int:
        return 1 if any(c.result == FAIL for c in self.checks) else 0

    def count(self, result: str) -> int:
        return sum(c.result == result for c in self.checks)
