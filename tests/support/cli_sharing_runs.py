"""`python -m tests.support.cli_sharing_runs ARGS...`: the command line as `python -m hyperpod_dpd.cli`
runs it (hyperpod_dpd.cli `entry`, in a process of its own), its plans' program runs this test
session's (tests/support/program_runs.py, the directory in $HYPERPOD_DPD_TEST_PROGRAM_RUNS).

For the tests that start the CLI as a process for what a process does (a rollout SIGKILLed
half way, `diff` planning two git refs at once in worktrees), not for the program run: a run of
the same program and config is the same run in a process of its own, and making it again there
cost each such process seconds (the SDKs' and providers' imports among them)."""

from __future__ import annotations

import os
from pathlib import Path

import hyperpod_dpd.plan.planner
from hyperpod_dpd.cli import entry
from tests.fix_hints import handed_stacks
from tests.support import program_runs

if __name__ == "__main__":
    shared = os.environ.get(program_runs.SHARED_RUNS_ENV)
    program_runs.SHARED_RUNS = Path(shared) if shared else None
    hyperpod_dpd.plan.planner.run_program = program_runs.plan_run
    handed_stacks.install()  # the runs it leaves keep the stacks they handed parse_settings
    entry()
