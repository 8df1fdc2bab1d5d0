"""`--commit`: each applied step's stack file committed with its verdict, so a later run, a later
deploy from main and a resume all read the weights the stack has, and a fresh checkout never
brings a rolled-back candidate's weight back. Only the stack file is committed (`git commit
--only`), whatever else the working tree holds; CI pushes the commit (rollout.yml)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from core.exits import UsageProblem


def _git(project_dir: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["git", "-C", str(project_dir), *args],
        capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def check_can_commit(project_dir: Path, stack_file: Path) -> None:
    """Before anything changes: --commit can commit the stack file (UsageProblem if not)."""
    try:
        inside = _git(project_dir, "rev-parse", "--is-inside-work-tree")
    except FileNotFoundError:
        raise UsageProblem(
            "--commit: no `git` on PATH; install git or leave --commit out"
        ) from None
    if inside.returncode != 0 or inside.stdout.strip() != "true":
        raise UsageProblem(
            f"--commit: {project_dir} is not in a git work tree; run the rollout in the "
            "repository's checkout, or leave --commit out"
        )
    tracked = _git(project_dir, "ls-files", "--error-unmatch", "--", stack_file.name)
    if tracked.returncode != 0:
        raise UsageProblem(
            f"--commit: {stack_file.name} is not tracked by git: git add {stack_file.name} && "
            "git commit, then roll out"
        )
    ident = _git(project_dir, "var", "GIT_COMMITTER_IDENT")
    if ident.returncode != 0:
        raise UsageProblem(
            "--commit: git has no committer identity here: git config user.name '...' && git "
            "config user.email '...'"
        )


def commit_stack_file(project_dir: Path, stack_file: Path, message: str) -> str | None:
    """Commit the stack file alone with `message`; its commit id (None: nothing to commit, as
    when a resumed step was committed before the kill)."""
    unchanged = _git(project_dir, "diff", "--quiet", "HEAD", "--", stack_file.name)
    if unchanged.returncode == 0:
        return None
    done = _git(project_dir, "commit", "--quiet", "--only", "-m", message, "--", stack_file.name)
    if done.returncode != 0:
        raise CommitFailed(done.stderr.strip() or done.stdout.strip())
    return _git(project_dir, "rev-parse", "HEAD").stdout.strip()


class CommitFailed(Exception):
    """git refused the commit (a hook, a lock): the step is applied, the file written."""
