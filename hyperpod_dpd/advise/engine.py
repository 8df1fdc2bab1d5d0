"""aisimulate in its own venv (build/advise-venv, from requirements-advise.txt, built on first use
and rebuilt when the file changes), spoken to as a subprocess: JSON in, JSON out (simulate.py).
No module of the project imports aisimulate; only simulate.py runs beside it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
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
    """`venv` holding exactly `requirements` (every package listed, hashed; nothing resolved)."""
    if not (venv / ".requirements").exists():
        print(f"building {venv} from {requirements.name} (once; a minute)", file=sys.stderr)
    return venv_from(requirements, venv)


PROGRESS = re.compile(r"^advise: \[(\d+)/(\d+)\] (.*)$")


def simulate(configs: list[dict[str, Any]], venv: Path | None = None) -> dict[str, Any]:
    """aisimulate's answer for `configs` ([{"id", "label", "config"}]): {"engine", "results"}.
    Its progress lines become one live line on our stderr (hyperpod_dpd/shared/progress.py);
    anything else it says passes through."""
    python = (venv or advise_venv()) / "bin" / "python"
    progress = Progress("advise: simulating")
    with tempfile.TemporaryFile("w+") as request, tempfile.TemporaryFile("w+") as answer:
        json.dump({"configs": configs}, request)
        request.seek(0)
        # Its own process group, ended with the simulator's children when we stop early
        # (Ctrl-C): pandas and pyarrow imports do not notice SIGINT for seconds.
        with children.owned(
            [str(python), str(PROGRAM)],
            stdin=request,
            stdout=answer,
            stderr=subprocess.PIPE,
            text=True,
            env=foreign_env(PYTHONDONTWRITEBYTECODE="1"),
        ) as proc:
            assert proc.stderr is not None
            for line in proc.stderr:
                match = PROGRESS.match(line.rstrip("\n"))
                if match:
                    progress.update(int(match[1]), int(match[2]), match[3])
                else:
                    progress.say(line)
            returncode = proc.wait()
        if returncode != 0:
            raise EngineError(
                f"the simulator ({PROGRAM.name} in {python.parents[1]}) exited {returncode}; "
                f"its messages are above. Rebuild the venv with `rm -r {python.parents[1]}` if "
                "it is damaged."
            )
        answer.seek(0)
        return json.load(answer)
