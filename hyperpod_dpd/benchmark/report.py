"""`benchmark compare`'s files: report.md, the charts' data and the PNGs (drawn in the
benchmark venv, where matplotlib is)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from hyperpod_dpd.benchmark import compare, results
from hyperpod_dpd.benchmark.loadgen import ROOT, loadtest_venv
from hyperpod_dpd.shared.venvs import foreign_env


def draw_charts(data: dict, out: Path) -> list[str]:
    spec = out / "charts.json"
    spec.write_text(json.dumps(data, indent=2) + "\n")
    python = loadtest_venv() / "bin" / "python"
    env = foreign_env(MPLBACKEND="Agg")
    proc = subprocess.run(
        [str(python), str(ROOT / "hyperpod_dpd" / "benchmark" / "plots.py"), str(spec), str(out)],
        capture_output=True, text=True, env=env,
    )  # fmt: skip
    if proc.returncode != 0:
        raise RuntimeError(f"drawing the charts failed: {proc.stderr.strip()}")
    return proc.stdout.split()


def write_report(run_dirs: list[Path], out: Path) -> Path:
    runs = [results.read(d) for d in run_dirs]
    labels = [r["label"] for r in runs]
    if len(set(labels)) < len(labels):  # the charts' legends need distinct names
        for run, directory in zip(runs, run_dirs, strict=True):
            run["label"] = f"{run['label']} ({directory})"
    out.mkdir(parents=True, exist_ok=True)
    data = compare.chart_data(runs)
    charts = draw_charts(data, out)
    report = out / "report.md"
    report.write_text(compare.report_md(runs, charts))
    return report
