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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.vocabulary import COHERENT_CHANGE_RULE
from hyperpod_dpd.diff.coherent import CoherentChange, coherent_changes
from hyperpod_dpd.diff.iteration import Advisory, advisories
from hyperpod_dpd.diff.values import ABSENT
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
    values: list[tuple[str, Any, Any]] = field(default_factory=list)  # (path, base, head)


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
    # One variable per iteration (iteration.py): DPD endpoints changing several at once.
    advisories: list[Advisory] = field(default_factory=list)
    # In-place changes of what a DPD endpoint's two pools must agree on (coherent.py).
    coherent: list[CoherentChange] = field(default_factory=list)

    @property
    def mandatory_failures(self) -> list[CoherentChange]:
        """What the head stack's policy makes mandatory: `diff` exits 1 on any."""
        return [c for c in self.coherent if c.level == "mandatory"]

    @property
    def empty(self) -> bool:
        return not (
            self.added or self.removed or self.changed or self.manifests
            or self.new_violations or self.fixed_violations or self.cost_delta
            or self.sizing_changes or self.number_changes
        )  # fmt: skip

    @property
    def cost_delta(self) -> float:
        return round(plan_cost(self.head) - plan_cost(self.base), 4)

    @property
    def sizing_changes(self) -> dict[str, tuple[Any, Any]]:
        a = self.base.facts.get("sizing") or {}
        b = self.head.facts.get("sizing") or {}
        return {
            k: (a.get(k), b.get(k)) for k in sorted(a.keys() | b.keys()) if a.get(k) != b.get(k)
        }

    @property
    def number_changes(self) -> dict[str, tuple[Any, Any, str | None]]:
        """'<endpoint> <pool> <number>' -> (base value, head value, where head's came from),
        of the numbers whose value changed; none when a side's plan predates plan.json's
        numbers (settings/endpoint/numbers.py)."""
        a, b = self.base.facts.get("numbers"), self.head.facts.get("numbers")
        if a is None or b is None:
            return {}
        a, b = _flat_numbers(a), _flat_numbers(b)
        return {
            k: (_value(a.get(k)), _value(b.get(k)), (b.get(k) or {}).get("from"))
            for k in sorted(a.keys() | b.keys())
            if _value(a.get(k)) != _value(b.get(k))
        }


def _flat_numbers(numbers: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """plan.json's numbers ({endpoint: {number or pool: ...}}) as '<endpoint> [<pool>] <number>'
    -> {value, from}."""
    flat = {}
    for endpoint, by in numbers.items():
        for name, item in by.items():
            if "value" in item:
                flat[f"{endpoint} {name}"] = item
            else:
                flat.update({f"{endpoint} {name} {n}": g for n, g in item.items()})
    return flat


def _value(item: dict[str, Any] | None) -> Any:
    return None if item is None else item.get("value")


def plan_cost(plan: PlanData) -> float:
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


def changed_values(
    a: Any, b: Any, prefix: str = "", names: dict[str, str] | None = None
) -> list[tuple[str, Any, Any]]:
    """(dotted path, base value, head value) where `a` and `b` differ (ABSENT: not on that
    side). Lists of named things (instance groups, env vars, target groups by the resource
    their ARN names, via `names`) are compared by name, other lists by index."""
    names = names or {}
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for key in sorted(a.keys() | b.keys()):
            sep = "" if str(key).startswith("[") else "."
            where = f"{prefix}{sep}{key}" if prefix else str(key)
            if key not in a or key not in b:
                out.append((where, a.get(key, ABSENT), b.get(key, ABSENT)))
            else:
                out += changed_values(a[key], b[key], where, names)
        return out
    keyed = _keyed(a, names), _keyed(b, names)
    if keyed[0] is not None and keyed[1] is not None:
        return changed_values(keyed[0], keyed[1], prefix, names)
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        out = []
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            out += changed_values(x, y, f"{prefix}[{i}]", names)
        return out
    return [] if a == b else [(prefix or "(value)", a, b)]


def changed_paths(a: Any, b: Any, prefix: str = "") -> list[str]:
    """Dotted paths where `a` and `b` differ (changed_values' paths)."""
    return [path for path, _, _ in changed_values(a, b, prefix)]


NAME_KEYS = ("instanceGroupName", "name", "arn")


def _keyed(value: Any, names: dict[str, str]) -> dict[str, Any] | None:
    if not isinstance(value, list) or not value or not all(isinstance(v, dict) for v in value):
        return None
    for key in NAME_KEYS:
        found = [v.get(key) for v in value]
        if all(isinstance(n, str) for n in found) and len(set(found)) == len(found):
            shown = [names.get(n, n) if key == "arn" else n for n in found]
            return {f"[{n}]": v for n, v in zip(shown, value, strict=True)}
    return None


def _forces_replacement(type_: str, path: str) -> bool:
    prefixes = REPLACE_ON.get(type_, K8S_NAME_PATHS if type_.startswith("kubernetes:") else ())
    return any(path == p or path.startswith(p + ".") or path.startswith(p + "[") for p in prefixes)


def diff_plans(base: PlanData, head: PlanData) -> PlanDiff:
    if base.stack != head.stack:
        raise PlanDirError(
            [
                ConfigProblem(
                    head.label,
                    f"a plan of stack {head.stack}",
                    f"a plan of the same stack as {base.label} ({base.stack})",
                    "compare plans of one stack: plan both with the same --stack",
                )
            ],
            source="diff",
        )
    changed = []
    # A reference by provider id (a target group's ARN) is shown by the resource's name.
    names = {
        r["id"]: r["name"]
        for plan in (base, head)
        for r in plan.resources.values()
        if isinstance(r.get("id"), str)
    }
    for urn in sorted(base.resources.keys() & head.resources.keys()):
        a, b = base.resources[urn], head.resources[urn]
        values = changed_values(a.get("inputs"), b.get("inputs"), names=names)
        if values:
            paths = [p for p, _, _ in values]
            replace = [p for p in paths if _forces_replacement(b["type"], p)]
            changed.append(ResourceChange(urn, b["type"], b["name"], paths, replace, values))
    manifests = {}
    for name in sorted(base.manifests.keys() | head.manifests.keys()):
        before, after = base.manifests.get(name, ""), head.manifests.get(name, "")
        if before != after:
            manifests[name] = "".join(
                difflib.unified_diff(
                    before.splitlines(keepends=True),
                    after.splitlines(keepends=True),
                    f"{base.label}/{name}" if before else "/dev/null",
                    f"{head.label}/{name}" if after else "/dev/null",
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
        advisories=advisories(base.resources, head.resources),
        coherent=coherent_changes(base.resources, head.resources, _level(head)),
    )


def _level(plan: PlanData) -> str:
    """The head stack's level of the coherent-change rule (advisory for a plan written before
    plan.json had it; disabled: no findings)."""
    return (plan.facts.get("diffRules") or {}).get(COHERENT_CHANGE_RULE, "advisory")
