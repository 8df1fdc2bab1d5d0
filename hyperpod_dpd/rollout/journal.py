"""One rollout of a stack at a time, and the step it was applying when it stopped.

Two locks, because they cover different spans. Pulumi's backend locks a stack for the length of
one update (`preview`, `up`): two `up`s never interleave, wherever they run. A rollout's step is
longer than an update: read the weights, judge them, write the next ones, preview, update,
commit. Two rollouts of one stack could both judge the candidate at 5%, one roll it back and the
other then promote it to 25%: each update alone was serialized, the pair was not. So a rollout
holds an exclusive lock of its own, `flock` on .hyperpod-dpd/rollout/<stack>.lock in the
project, from its first read of the stack to its exit; a second rollout of the stack from this
checkout refuses to start, naming the one that holds it (the kernel drops the lock when its
holder dies, even by SIGKILL: no stale lock to clear). Between machines the workflow's
concurrency group (.github/workflows/rollout.yml) serializes CI's runs. Nothing serializes a
rollout run by hand beside CI's (or two people's): each step re-reads the weights the stack has
deployed just before writing its own and again after its preview, so a step applied elsewhere
in the meantime stops this one, named; what stays open is the moment between that last read and
the update taking Pulumi's lock. docs/canary.md says to disable the workflow before rolling out
by hand.

The journal, .hyperpod-dpd/rollout/<stack>.json, is written before the stack file and removed
once the step is applied (and committed, with --commit): a rollout killed in between finds it
on its next run and finishes the step it names, with every check again, instead of judging
weights it never applied.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from core.exits import UsageProblem
from hyperpod_dpd.rollout.steps import Step

STATE_DIR = Path(".hyperpod-dpd") / "rollout"  # git ignores .hyperpod-dpd/ (.gitignore)


def state_dir(project_dir: Path) -> Path:
    return project_dir / STATE_DIR


@contextlib.contextmanager
def exclusive(project_dir: Path, stack: str) -> Iterator[None]:
    """Hold the rollout lock of `stack`; UsageProblem naming the holder when another has it."""
    directory = state_dir(project_dir)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(directory / f"{stack}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise UsageProblem(
            f"--project-dir {project_dir}: cannot write the rollout's lock in {directory} "
            f"({exc.strerror or exc})"
        ) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"
            raise UsageProblem(
                f"--stack {stack}: another rollout of this stack is running ({holder}; lock "
                f"{directory / (stack + '.lock')}): wait for it to end, or stop it"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} since {_now()}".encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock


@dataclass(frozen=True)
class Journal:
    """The step a rollout was applying: written before the stack file changes."""

    verdict: str
    candidate: str
    before: dict[str, int]
    after: dict[str, int]
    reasons: list[str]
    window: str
    started: str

    @property
    def step(self) -> Step:
        return Step(self.verdict, self.candidate, self.before, self.after)


def journal_path(project_dir: Path, stack: str) -> Path:
    return state_dir(project_dir) / f"{stack}.json"


def read_journal(project_dir: Path, stack: str) -> Journal | None:
    path = journal_path(project_dir, stack)
    try:
        data = json.loads(path.read_text())
        return Journal(**data)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError):
        path.unlink(missing_ok=True)  # unreadable (a kill mid-write): the step was not begun
        return None


def write_journal(
    project_dir: Path, stack: str, step: Step, reasons: list[str], window: str
) -> None:
    entry = Journal(step.verdict, step.candidate, step.before, step.after, reasons, window, _now())
    path = journal_path(project_dir, stack)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(asdict(entry), indent=2) + "\n")
    os.replace(tmp, path)  # whole or absent, whenever the process dies


def clear_journal(project_dir: Path, stack: str) -> None:
    journal_path(project_dir, stack).unlink(missing_ok=True)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
