"""aisimulate in its own venv (build/advise-venv, from requirements-advise.txt, built on first use
and rebuilt when it was built otherwise: hyperpod_dpd/shared/venvs.py), spoken to as a
subprocess: JSON in, JSON out (simulate.py). No module of the project imports aisimulate; only
simulate.py runs beside it."""

from __future__ import annotations

import json
import re
import subprocess
import threading
from pathlib import Path
from typing import Any

from hyperpod_dpd.shared import children
from hyperpod_dpd.shared.progress import Progress
from hyperpod_dpd.shared.venvs import foreign_env, venv_from

ROOT = Path(__file__).resolve().parents[2]
REQUIREMENTS = ROOT / "requirements-advise.txt"
VENV = ROOT / "build" / "advise-venv"
PROGRAM = Path(__file__).with_name("simulate.py")


class EngineError(RuntimeError):
    """The simulator program failed as a whole (not one layout): names what to look at."""


def advise_venv(venv: Path = VENV, requirements: Path = REQUIREMENTS) -> Path:
    """`venv` holding exactly `requirements` (every package listed, hashed; nothing resolved),
    byte-compiled: the simulator runs with PYTHONDONTWRITEBYTECODE (Session), and compiling what
    it imports (pandas, pyarrow, pydantic, aisimulate) tripled each start (1.9 s CPU, 0.6 s
    compiled)."""
    return venv_from(requirements, venv, compiled=True)


PROGRESS = re.compile(r"^advise: \[(\d+)/(\d+)\] (.*)$")


def _relay(stream, progress: Progress, stopping: threading.Event) -> None:
    """The simulator's stderr: its progress lines on our live line, anything else as it is,
    until we stop it early: what it says then (the traceback of an interrupted import) is
    noise about our own stop, not news for the user."""
    for line in stream:
        if stopping.is_set():
            continue
        match = PROGRESS.match(line.rstrip("\n"))
        if match:
            progress.update(int(match[1]), int(match[2]), match[3])
        else:
            progress.say(line)


def _failed(python: Path, returncode: int | None) -> EngineError:
    return EngineError(
        f"the simulator ({PROGRAM.name} in {python.parents[1]}) exited {returncode}; "
        f"its messages are above. Rebuild the venv with `rm -r {python.parents[1]}` if "
        "it is damaged."
    )


def simulate(configs: list[dict[str, Any]], venv: Path | None = None) -> dict[str, Any]:
    """aisimulate's answer for `configs` ([{"id", "label", "config"}]): {"engine", "results"},
    from a simulator started for them. Its progress lines become one live line on our stderr
    (hyperpod_dpd/shared/progress.py); anything else it says passes through."""
    with Session(venv) as simulator:
        return simulator.simulate(configs)


class Session:
    """One simulator for a whole command (simulate.py --serve): `simulate(configs)` as the
    function of that name answers, each call one request to the same process, which loads
    aisimulate and its kernel tables once. The process ends with the block, on an error or an
    interrupt too (it is terminated, then killed if it lingers)."""

    def __init__(self, venv: Path | None = None) -> None:
        self.venv = venv
        self.proc: subprocess.Popen | None = None
        self.engine: dict[str, Any] | None = None

    def __enter__(self) -> Session:
        self.python = (self.venv or advise_venv()) / "bin" / "python"
        self._stopping = threading.Event()
        # Its own process group, ended with the simulator's children when we stop early
        # (Ctrl-C): pandas and pyarrow imports do not notice SIGINT for seconds.
        self.proc = children.start(
            [str(self.python), str(PROGRAM), "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=foreign_env(PYTHONDONTWRITEBYTECODE="1"),
        )
        try:
            # Its stderr is read beside the answers, or a full pipe would stall it mid-request.
            progress = Progress("advise: simulating")
            self._relay = threading.Thread(
                target=_relay, args=(self.proc.stderr, progress, self._stopping)
            )
            self._relay.daemon = True
            self._relay.start()
        except BaseException:  # interrupted before the block that would stop it has begun
            self._stopping.set()
            children.stop(self.proc)
            raise
        return self

    def simulate(self, configs: list[dict[str, Any]]) -> dict[str, Any]:
        assert self.proc is not None and self.proc.stdin and self.proc.stdout
        try:
            self.proc.stdin.write(json.dumps({"configs": configs}) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except BrokenPipeError:
            line = ""
        if not line:
            raise _failed(self.python, self.proc.wait())
        answer = json.loads(line)
        self.engine = answer["engine"]
        return answer

    def __exit__(self, *exc: object) -> None:
        proc = self.proc
        if proc is None:
            return
        if exc[0] is not None:  # an error or an interrupt: the group ends now
            if issubclass(exc[0], KeyboardInterrupt):  # type: ignore[arg-type]
                self._stopping.set()
            children.stop(proc)
        else:
            try:
                if proc.stdin:
                    proc.stdin.close()  # the end of its requests: it exits
                proc.wait()
            except BrokenPipeError:
                children.stop(proc)
        self._relay.join(timeout=5)
