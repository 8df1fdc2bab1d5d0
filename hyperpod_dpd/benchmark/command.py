"""`hyperpod-dpd benchmark run|compare|fake-server`, run (the user's load test): a run here or in
the cluster, a comparison report, the fake server. The parser is hyperpod_dpd/cli/benchmark.py.
What each needs is imported when it runs: aiperf's side lives in build/loadtest-venv."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.exits import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK


def _bad(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def outside_sources(out: Path, project_dir: Path) -> None:
    """Results never land in a source folder of the project (a package such as bench/, or
    tests/, docs/): they would be committed as code, or shipped in a Job's ConfigMap."""
    from hyperpod_dpd.benchmark.scenario import BenchmarkArgError

    folders = {p.parent for p in project_dir.glob("*/__init__.py")} | {project_dir / "docs"}
    where = out.resolve()
    for folder in sorted(folders):
        if where.is_relative_to(folder.resolve()):
            raise BenchmarkArgError(
                "--out", str(out), f"a directory outside the project's source folder {folder.name}/",
                f"write results elsewhere, e.g. --out results/{out.name} (git-ignored)",
            )  # fmt: skip


def run_benchmark(args: argparse.Namespace, project_dir: Path) -> int:
    from hyperpod_dpd.benchmark.run import RunError, local_run
    from hyperpod_dpd.benchmark.scenario import BenchmarkArgError

    try:
        outside_sources(args.out, project_dir)
        if args.target is None and args.stack is None:
            return _bad("--target: say where the endpoint is (--target URL), or --stack S to "
                        "run in the cluster")  # fmt: skip
        if args.target is None:
            from hyperpod_dpd.benchmark.cluster_run import cluster_run

            return cluster_run(args, project_dir)
        return local_run(args, project_dir)
    except BenchmarkArgError as exc:
        return _bad(str(exc))
    except RunError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILED


def compare_runs(args: argparse.Namespace, project_dir: Path) -> int:
    from hyperpod_dpd.benchmark.compare import CompareError
    from hyperpod_dpd.benchmark.report import write_report
    from hyperpod_dpd.benchmark.results import ExportError
    from hyperpod_dpd.benchmark.scenario import BenchmarkArgError

    if len(args.runs) < 2:
        return _bad("compare: give BASE and at least one more run directory")
    try:
        outside_sources(args.out, project_dir)
        report = write_report(args.runs, args.out)
    except (CompareError, ExportError, BenchmarkArgError) as exc:
        return _bad(str(exc))
    except (OSError, ValueError) as exc:  # a path the file system refuses (too long, NUL, ...)
        name = str(getattr(exc, "filename", None) or "a run directory")
        shown = name[:80] + ("..." if len(name) > 80 else "")
        why = getattr(exc, "strerror", None) or str(exc)
        return _bad(f"{shown}: {why}; give run directories and an --out that exist or "
                    "can be made")  # fmt: skip
    print(f"wrote {report}")
    return EXIT_OK


def fake_server(args: argparse.Namespace, project_dir: Path) -> int:
    import os

    from hyperpod_dpd.benchmark.fake_timings import argv_of
    from hyperpod_dpd.benchmark.loadgen import ROOT, loadtest_venv
    from hyperpod_dpd.shared.venvs import foreign_env

    python = str(loadtest_venv() / "bin" / "python")
    # The server runs where aiohttp is; our package comes from this checkout.
    env = foreign_env(PYTHONPATH=str(ROOT))
    os.execve(python, [python, "-m", "hyperpod_dpd.benchmark.fake_server", *argv_of(args)], env)
    return 0  # not reached
