"""The two sides of `hyperpod-dpd diff`: plan directories as they are, git refs planned each in
a temporary worktree with that ref's own code (its program, config model and rules)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from hyperpod_dpd.diff.compare import PlanData, PlanDirError, load_plan
from settings import ConfigProblem


def _commits(repo: Path, refs: list[str]) -> dict[str, str]:
    """The commit each ref names; every ref that names none is reported at once, before
    anything is planned."""
    commits, problems = {}, []
    for ref in refs:
        check = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if check.returncode == 0:
            commits[ref] = check.stdout.strip()
        else:
            problems.append(
                ConfigProblem(
                    ref, "not a commit", "a branch, tag or commit of this repository",
                    "check `git log`",
                )
            )  # fmt: skip
    if problems:
        raise PlanDirError(problems, source="git ref")
    return commits


def _has_stack(repo: Path, sha: str, stack: str) -> bool:
    found = subprocess.run(
        ["git", "-C", str(repo), "cat-file", "-e", f"{sha}:Pulumi.{stack}.yaml"],
        capture_output=True, check=False,
    )  # fmt: skip
    return found.returncode == 0


def plan_refs(repo: Path, refs: list[str], stack: str, work: Path) -> dict[str, Path | None]:
    """Plan `stack` at each git ref with that ref's own code, each in a temporary worktree.

    Every ref is checked before anything is planned; refs naming the same commit are planned
    once; distinct commits are planned at the same time (a pull request's base and head: two
    plans of a few seconds each, on a CI runner with at least two cores). A ref without the
    stack's file, when another has it (the pull request that adds a stack), is None: no stack
    yet, so everything the other side plans is added."""
    commits = _commits(repo, refs)
    present = {sha: _has_stack(repo, sha, stack) for sha in dict.fromkeys(commits.values())}
    absent = {sha for sha, has in present.items() if not has} if any(present.values()) else set()
    outs = {
        sha: work / f"plan-{sha[:12]}"
        for sha in dict.fromkeys(commits.values())
        if sha not in absent
    }
    with tempfile.TemporaryDirectory(prefix="hyperpod-dpd-diff-") as tmp:
        running = {}
        try:
            for sha, out in outs.items():
                tree = Path(tmp) / sha[:12]
                subprocess.run(
                    ["git", "-C", str(repo), "worktree", "add", "--detach", "--quiet",
                     str(tree), sha],
                    check=True, capture_output=True,
                )  # fmt: skip
                # The ref's packages first on the path: its own program, config model and rules.
                # Errors go to a file: two plans at once must not stall on a full pipe.
                log = (Path(tmp) / f"{sha[:12]}.stderr").open("w+")
                process = subprocess.Popen(
                    [sys.executable, "-m", "hyperpod_dpd.cli", "plan", "--stack", stack,
                     "--project-dir", str(tree), "--out", str(out), "--format", "json"],
                    cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)},
                    stdout=subprocess.DEVNULL, stderr=log, text=True,
                )  # fmt: skip
                running[sha] = (tree, process, log)
            results = {}
            for sha, (_, process, log) in running.items():
                code = process.wait()
                log.seek(0)
                results[sha] = (code, log.read())
        finally:
            for tree, process, log in running.values():
                if process.poll() is None:
                    process.kill()
                    process.wait()
                log.close()
                subprocess.run(
                    ["git", "-C", str(repo), "worktree", "remove", "--force", str(tree)],
                    check=False, capture_output=True,
                )  # fmt: skip
    for ref, sha in commits.items():
        if sha in absent:
            continue
        code, stderr = results[sha]
        if code not in (0, 1):  # 1: the plan has mandatory violations, still a plan
            raise PlanDirError(
                [
                    ConfigProblem(
                        ref,
                        f"plan failed (exit {code})",
                        "a plannable ref",
                        stderr.strip()[-500:],
                    )
                ],
                source="git ref",
            )
    return {ref: outs.get(sha) for ref, sha in commits.items()}


def resolve(sides: list[str], repo: Path, stack: str | None, work: Path) -> list[PlanData]:
    """Each side as a plan: a plan directory is read, a git ref is planned (needs --stack)."""
    refs = [side for side in sides if not _is_dir(side)]
    problems = [
        _neither(side, which, repo, stack)
        for which, side in zip(("BASE", "HEAD", *("RUN",) * len(sides)), sides, strict=False)
        if side in refs and not _is_ref(repo, side)
    ]
    if problems:
        raise PlanDirError(problems, source="diff")
    if refs and stack is None:
        stacks = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in repo.glob("Pulumi.*.yaml"))
        raise PlanDirError(
            [
                ConfigProblem(
                    side,
                    "a git ref, and no --stack to plan at it",
                    "a plan directory, or a git ref with --stack "
                    f"({', '.join(stacks) or 'a stack of this project'})",
                    f"add --stack {stacks[0] if stacks else '<stack>'}",
                )
                for side in refs
            ],
            source="diff",
        )
    planned = plan_refs(repo, refs, stack, work) if refs else {}
    return [
        no_stack(side, stack or "")
        if side in planned and planned[side] is None
        else load_plan(planned.get(side) or Path(side), label=side)
        for side in sides
    ]


def _is_ref(repo: Path, side: str) -> bool:
    if "\x00" in side:  # no ref holds a NUL (git check-ref-format), nor can an argument
        return False
    check = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", f"{side}^{{commit}}"],
        capture_output=True, check=False,
    )  # fmt: skip
    return check.returncode == 0


def _neither(side: str, which: str, repo: Path, stack: str | None) -> ConfigProblem:
    """A side (`which`: BASE or HEAD) that is no plan directory and no commit: a path is to be
    planned first."""
    try:
        is_file = Path(side).is_file()
    except (OSError, ValueError):  # a name the file system refuses (too long, NUL)
        is_file = False
    got = "a file, not a plan directory" if is_file else "no such directory or git ref"
    return ConfigProblem(
        which,
        side,
        f"a directory written by `hyperpod-dpd plan --out`, or a branch, tag or commit ({got})",
        f"hyperpod-dpd plan --stack {stack or '<stack>'} --out {side}",
    )


def no_stack(label: str, stack: str) -> PlanData:
    """The side of a ref that has no such stack yet: nothing planned, nothing costs."""
    return PlanData(label, stack, resources={}, manifests={}, violations=[], facts={})


def _is_dir(side: str) -> bool:
    """A plan directory (a name the file system refuses, too long or with NUL, is none)."""
    try:
        return Path(side).is_dir()
    except (OSError, ValueError):
        return False
