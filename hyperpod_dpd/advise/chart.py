"""The frontier chart: the data for frontier_plot.py, drawn in the benchmark venv (matplotlib is
there, not in the advise venv, which holds only what aisimulate's `predict` needs)."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from hyperpod_dpd.advise.search import Candidate
from hyperpod_dpd.advise.workload import Workload
from hyperpod_dpd.shared.venvs import foreign_env, venv_from

ROOT = Path(__file__).resolve().parents[2]
PLOT = Path(__file__).with_name("frontier_plot.py")


def chart_data(
    title: str, workload: Workload, candidates: list[Candidate], recommended: str | None
) -> dict:
    return {
        "title": title,
        "load": "concurrency" if workload.load == "concurrency" else "requests/s",
        "tpotSloMs": workload.tpot_ms,
        "ttftSloMs": workload.ttft_ms,
        "recommended": recommended,
        "points": [
            {
                "mode": c.layout.mode,
                "layout": c.layout.label,
                "level": c.level,
                "tpotMs": c.tpot_ms,
                "tokensPerGpu": c.tokens_per_s_per_gpu,
                "meetsSlo": c.meets_slo,
                "misses": [metric for metric, _, _ in c.misses],
            }
            for c in candidates
        ],
    }


def draw(data: dict, out: Path, venv: Path = ROOT / "build" / "loadtest-venv") -> Path:
    if not (venv / ".requirements").exists():
        print(f"building {venv} for the chart (once; a few minutes)", file=sys.stderr)
    venv = venv_from(ROOT / "requirements-loadtest.txt", venv)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "frontier.json"
        spec.write_text(json.dumps(data))
        subprocess.run([str(venv / "bin" / "python"), str(PLOT), str(spec), str(out)],
                       check=True, env=foreign_env(), stdout=subprocess.DEVNULL)  # fmt: skip
    return out
