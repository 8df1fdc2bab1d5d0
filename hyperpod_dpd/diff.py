"""`hyperpod-dpd diff BASE HEAD`: what a change does, from two offline plans.

BASE and HEAD are plan directories (written by `hyperpod-dpd plan`) or git refs (each is then
planned in a temporary worktree, with that ref's own code). The markdown is made for a pull
request comment: resources added, removed and changed (with the changed input paths and the
changes that force a replacement), unified diffs of the Kubernetes manifests, policy violations
new and fixed, sizing changes and the hourly cost delta. Plans hold no secret values, so
neither does the diff.
"""

from __future__ import annotations

import difflib
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from settings import ConfigError, ConfigProblem

PLAN_FILES = ("resources.json", "policy-report.json", "plan.json")
# Inputs whose change replaces the resource (provider schemas: CloudFormation createOnly
# properties of AWS::SageMaker::Cluster; ForceNew fields of the aws provider; Kubernetes names).
REPLACE_ON = {
    "aws-native:sagemaker:Cluster": ("clusterName", "orchestrator.eks", "vpcConfig"),
    "aws:eks/cluster:Cluster": ("name", "vpcConfig.subnetIds", "encryptionConfig"),
    "aws:ec2/vpc:Vpc": ("cidrBlock",),
    "aws:ec2/subnet:Subnet": ("cidrBlock", "availabilityZoneId", "vpcId"),
    "aws:s3/bucket:Bucket": ("bucket", "bucketPrefix"),
    "aws:iam/role:Role": ("name", "namePrefix"),
    "aws:amp/workspace:Workspace": (),
    "kubernetes:batch/v1:Job": ("metadata.name", "spec"),
}
K8S_NAME_PATHS = ("metadata.name", "metadata.namespace")


class PlanDirError(ConfigError):
    pass


@dataclass
class PlanData:
    label: str
    stack: str
    resources: dict[str, dict[str, Any]]
    manifests: dict[str, str]
    violations: list[dict[str, str]]
    facts: dict[str, Any]


@dataclass
class ResourceChange:
    urn: str
    type: str
    name: str
    paths: list[str] = field(default_factory=list)
    replace: list[str] = field(default_factory=list)


@dataclass
class PlanDiff:
    base: PlanData
    head: PlanData
    added: list[dict[str, Any]]
    removed: list[dict[str, Any]]
    changed: list[ResourceChange]
    manifests: dict[str, str]  # file -> unified diff
    new_violations: list[dict[str, str]]
    fixed_violations: list[dict[str, str]]

    @property
    def empty(self) -> bool:
        return not (
            self.added or self.removed or self.changed or self.manifests
            or self.new_violations or self.fixed_violations or self.cost_delta
            or self.sizing_changes
        )  # fmt: skip

    @property
    def cost_delta(self) -> float:
        return round(_cost(self.head) - _cost(self.base), 4)

    @property
    def sizing_changes(self) -> dict[str, tuple[Any, Any]]:
        a = self.base.facts.get("sizing") or {}
        b = self.head.facts.get("sizing") or {}
        return {
            k: (a.get(k), b.get(k)) for k in sorted(a.keys() | b.keys()) if a.get(k) != b.get(k)
        }


def _cost(plan: PlanData) -> float:
    return float(plan.facts.get("costPerHour", {}).get("total", 0.0))


def load_plan(directory: Path, label: str | None = None) -> PlanData:
    problems = [name for name in PLAN_FILES if not (directory / name).is_file()]
    if problems:
        raise PlanDirError(
            [
                ConfigProblem(
                    str(directory),
                    f"missing {', '.join(problems)}",
                    "a directory written by `hyperpod-dpd plan`",
                    f"run `hyperpod-dpd plan --stack <stack> --out {directory}`",
                )
            ],
            source="plan directory",
        )
    try:
        resources = json.loads((directory / "resources.json").read_text())
        report = json.loads((directory / "policy-report.json").read_text())
        facts = json.loads((directory / "plan.json").read_text())
    except json.JSONDecodeError as exc:
        raise PlanDirError(
            [
                ConfigProblem(
                    str(directory), f"corrupt JSON ({exc})", "a plan directory", "plan again"
                )
            ],
            source="plan directory",
        ) from None
    manifests_dir = directory / "manifests"
    manifests = (
        {p.name: p.read_text() for p in sorted(manifests_dir.glob("*.yaml"))}
        if manifests_dir.is_dir()
        else {}
    )
    return PlanData(
        label or str(directory),
        facts.get("stack", "?"),
        {r["urn"]: r for r in resources},
        manifests,
        report.get("violations", []),
        facts,
    )


def changed_paths(a: Any, b: Any, prefix: str = "") -> list[str]:
    """Dotted paths where `a` and `b` differ (lists compared by index)."""
    if isinstance(a, dict) and isinstance(b, dict):
        paths = []
        for key in sorted(a.keys() | b.keys()):
            sep = "" if str(key).startswith("[") else "."
            where = f"{prefix}{sep}{key}" if prefix else str(key)
            if key not in a or key not in b:
                paths.append(where)
            else:
                paths += changed_paths(a[key], b[key], where)
        return paths
    keyed = _keyed(a), _keyed(b)
    if keyed[0] is not None and keyed[1] is not None:
        # Lists of named things (instance groups, env vars): compare by name, not position.
        return changed_paths(keyed[0], keyed[1], prefix)
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        paths = []
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            paths += changed_paths(x, y, f"{prefix}[{i}]")
        return paths
    return [] if a == b else [prefix or "(value)"]


NAME_KEYS = ("instanceGroupName", "name")


def _keyed(value: Any) -> dict[str, Any] | None:
    if not isinstance(value, list) or not value or not all(isinstance(v, dict) for v in value):
        return None
    for key in NAME_KEYS:
        names = [v.get(key) for v in value]
        if all(isinstance(n, str) for n in names) and len(set(names)) == len(names):
            return {f"[{n}]": v for n, v in zip(names, value, strict=True)}
    return None


def _forces_replacement(type_: str, path: str) -> bool:
    prefixes = REPLACE_ON.get(type_, K8S_NAME_PATHS if type_.startswith("kubernetes:") else ())
    return any(path == p or path.startswith(p + ".") or path.startswith(p + "[") for p in prefixes)


def diff_plans(base: PlanData, head: PlanData) -> PlanDiff:
    if base.stack != head.stack:
        raise PlanDirError(
            [
                ConfigProblem(
                    "HEAD",
                    f"stack {head.stack}",
                    f"the same stack as BASE ({base.stack})",
                    "compare plans of one stack: plan both with the same --stack",
                )
            ],
            source="diff",
        )
    changed = []
    for urn in sorted(base.resources.keys() & head.resources.keys()):
        a, b = base.resources[urn], head.resources[urn]
        paths = changed_paths(a.get("inputs"), b.get("inputs"))
        if paths:
            replace = [p for p in paths if _forces_replacement(b["type"], p)]
            changed.append(ResourceChange(urn, b["type"], b["name"], paths, replace))
    manifests = {}
    for name in sorted(base.manifests.keys() | head.manifests.keys()):
        before, after = base.manifests.get(name, ""), head.manifests.get(name, "")
        if before != after:
            manifests[name] = "".join(
                difflib.unified_diff(
                    before.splitlines(keepends=True),
                    after.splitlines(keepends=True),
                    f"base/{name}" if before else "/dev/null",
                    f"head/{name}" if after else "/dev/null",
                )
            )
    key = lambda v: (v["policy"], v["urn"], v["message"])  # noqa: E731
    base_v, head_v = {key(v): v for v in base.violations}, {key(v): v for v in head.violations}
    return PlanDiff(
        base,
        head,
        added=[head.resources[u] for u in sorted(head.resources.keys() - base.resources.keys())],
        removed=[base.resources[u] for u in sorted(base.resources.keys() - head.resources.keys())],
        changed=changed,
        manifests=manifests,
        new_violations=[head_v[k] for k in sorted(head_v.keys() - base_v.keys())],
        fixed_violations=[base_v[k] for k in sorted(base_v.keys() - head_v.keys())],
    )


def _money(delta: float) -> str:
    return f"{'+' if delta >= 0 else '-'}${abs(delta):,.2f}"


def _short(urn: str) -> str:
    return urn.rsplit("::", 1)[-1]


def render_markdown(d: PlanDiff) -> str:
    title = f"### hyperpod-dpd plan diff: stack `{d.head.stack}` ({d.base.label} → {d.head.label})"
    if d.empty:
        return f"{title}\n\nNo changes.\n"
    lines = [title, ""]
    replacing = [c for c in d.changed if c.replace]
    lines.append(
        f"**Resources:** {len(d.added)} to add, {len(d.changed)} to change "
        f"({len(replacing)} replaced), {len(d.removed)} to delete. "
        f"**Cost:** ${_cost(d.base):,.2f}/h → ${_cost(d.head):,.2f}/h ({_money(d.cost_delta)}/h)."
    )
    if replacing:
        lines += ["", "> [!WARNING]", "> These changes **replace** resources (delete and create):"]
        lines += [f"> - `{_short(c.urn)}` ({c.type}): {', '.join(c.replace)}" for c in replacing]
    if d.added or d.removed or d.changed:
        lines += ["", "| | resource | type | changed inputs |", "|---|---|---|---|"]
        lines += [f"| + | `{r['name']}` | `{r['type']}` | |" for r in d.added]
        lines += [f"| - | `{r['name']}` | `{r['type']}` | |" for r in d.removed]
        for c in d.changed:
            mark = "±" if c.replace else "~"
            shown = ", ".join(f"`{p}`" for p in c.paths[:8]) + (" …" if len(c.paths) > 8 else "")
            lines.append(f"| {mark} | `{c.name}` | `{c.type}` | {shown} |")
    if d.manifests:
        lines += ["", "#### Kubernetes manifests"]
        for name, text in d.manifests.items():
            lines += [
                "",
                f"<details><summary><code>{name}</code></summary>",
                "",
                "```diff",
                text.rstrip(),
                "```",
                "</details>",
            ]
    if d.new_violations or d.fixed_violations:
        lines += ["", "#### Policy"]
        lines += [
            f"- 🔴 new ({v['enforcement']}) `{v['policy']}` on `{_short(v['urn'])}`: {v['message']}"
            for v in d.new_violations
        ]
        lines += [f"- ✅ fixed `{v['policy']}` on `{_short(v['urn'])}`" for v in d.fixed_violations]
    if d.sizing_changes:
        lines += ["", "#### Sizing", "", "| | base | head |", "|---|---|---|"]
        lines += [f"| {k} | {a} | {b} |" for k, (a, b) in d.sizing_changes.items()]
    return "\n".join(lines) + "\n"


def render_text(d: PlanDiff) -> str:
    if d.empty:
        return f"{d.head.stack}: no changes"
    out = [f"{d.head.stack}: {d.base.label} -> {d.head.label}"]
    out += [f"  + {r['type']} {r['name']}" for r in d.added]
    out += [f"  - {r['type']} {r['name']}" for r in d.removed]
    for c in d.changed:
        flag = " (REPLACE: " + ", ".join(c.replace) + ")" if c.replace else ""
        out.append(f"  ~ {c.type} {c.name}: {', '.join(c.paths)}{flag}")
    out += [f"  manifest {name} changed" for name in d.manifests]
    out += [f"  NEW {v['policy']}: {_short(v['urn'])}: {v['message']}" for v in d.new_violations]
    out += [f"  FIXED {v['policy']}: {_short(v['urn'])}" for v in d.fixed_violations]
    out += [f"  sizing {k}: {a} -> {b}" for k, (a, b) in d.sizing_changes.items()]
    out.append(f"  cost per hour: {_cost(d.base):.2f} -> {_cost(d.head):.2f} ({d.cost_delta:+.2f})")
    return "\n".join(out)


def render_json(d: PlanDiff) -> str:
    return json.dumps(
        {
            "stack": d.head.stack,
            "added": [r["urn"] for r in d.added],
            "removed": [r["urn"] for r in d.removed],
            "changed": [{"urn": c.urn, "paths": c.paths, "replace": c.replace} for c in d.changed],
            "manifests": d.manifests,
            "newViolations": d.new_violations,
            "fixedViolations": d.fixed_violations,
            "sizing": {k: {"base": a, "head": b} for k, (a, b) in d.sizing_changes.items()},
            "costPerHour": {"base": _cost(d.base), "head": _cost(d.head), "delta": d.cost_delta},
        },
        indent=2,
    )


# --- git refs ---------------------------------------------------------------------------------


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


def plan_refs(repo: Path, refs: list[str], stack: str, work: Path) -> dict[str, Path]:
    """Plan `stack` at each git ref with that ref's own code, each in a temporary worktree.

    Every ref is checked before anything is planned; refs naming the same commit are planned
    once; distinct commits are planned at the same time (a pull request's base and head: two
    plans of a few seconds each, on a CI runner with at least two cores)."""
    commits = _commits(repo, refs)
    outs = {sha: work / f"plan-{sha[:12]}" for sha in dict.fromkeys(commits.values())}
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
    return {ref: outs[sha] for ref, sha in commits.items()}


def resolve(sides: list[str], repo: Path, stack: str | None, work: Path) -> list[PlanData]:
    """Each side as a plan: a plan directory is read, a git ref is planned (needs --stack)."""
    refs = [side for side in sides if not Path(side).is_dir()]
    if refs and stack is None:
        raise PlanDirError(
            [
                ConfigProblem(
                    side,
                    "not a directory",
                    "a plan directory, or a git ref with --stack",
                    "add --stack <name>",
                )
                for side in refs
            ],
            source="diff",
        )
    planned = plan_refs(repo, refs, stack, work) if refs else {}
    return [load_plan(planned.get(side, Path(side)), label=side) for side in sides]
