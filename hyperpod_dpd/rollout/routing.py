"""Before a step is applied: it changes the routing, and nothing else.

The stack is planned offline (hyperpod_dpd/plan) with the weights it holds and with the step's,
in this process, and the two plans diffed (hyperpod_dpd/diff/compare.py), as `hyperpod-dpd
diff` would diff them. A step may change, in place:
- the split's listener rule (specs/traffic/__init__.py): the weights of its forward's target groups;
- the rule group of the stack's alerts (specs/slo/rules.py): the `action` lines that name the
  weights (a candidate's rollback) and the candidate-against-baseline alert a split makes.
Anything else (a resource added, removed, replaced or changed elsewhere, a Kubernetes manifest,
a recording rule, a new mandatory policy finding) is named, path by path, and stops the step
before anything is written. A plan is a pure function of the stack's config and the code, so
each is made once per process (a loop's step N+1 starts from step N's plan).
"""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from hyperpod_dpd.diff.compare import PlanData, PlanDiff, diff_plans, load_plan
from hyperpod_dpd.rollout.steps import TRAFFIC_KEY
from settings.stack_file import Stack, with_value
from specs.slo.alerting import RULES_TYPE
from specs.slo.alerts import COMPARISON_ALERT
from specs.traffic import LISTENER_RULE_TYPE

# The listener rule's forward weights, as compare.py names the path: target groups keyed by name.
WEIGHT_PATH = re.compile(r"^actions\[\d+\]\.forward\.targetGroups\[[^\]]+\]\.weight$")
RULES_PATH = "data"

_PLANS: dict[str, PlanData] = {}


@dataclass(frozen=True)
class Routing:
    """What a step changes: `urns` of the resources it updates in place (the listener rule, the
    rule group), `refused` what it changes besides (empty: routing only)."""

    urns: frozenset[str]
    refused: list[str]


def plan_with(project_dir: Path, read: Stack, weights: dict[str, int]) -> PlanData:
    """The offline plan of the stack `read` with `weights` as its split (once per config)."""
    from core.collector import collector_paused
    from hyperpod_dpd.plan.planner import make_plan

    variant = with_value(read, TRAFFIC_KEY, weights)
    key = json.dumps([str(project_dir), variant.name, variant.file.config], sort_keys=True)
    if key not in _PLANS:
        with tempfile.TemporaryDirectory(prefix="hyperpod-dpd-rollout-") as tmp:
            out = Path(tmp) / "plan"
            with collector_paused(frozen=False):
                made = make_plan(project_dir, variant.name, out, read=variant)
            if made.stopped:
                found = "; ".join(
                    v.message for v in made.violations if v.enforcement == "mandatory"
                )
                raise PolicyStopped(weights, found)
            _PLANS[key] = load_plan(out, label=_label(weights))
    return _PLANS[key]


class PolicyStopped(Exception):
    """The plan with a step's weights stops at the policy gate."""

    def __init__(self, weights: dict[str, int], found: str):
        super().__init__(f"the plan with {_label(weights)} stops at the policy gate: {found}")


def _label(weights: dict[str, int]) -> str:
    return "traffic " + ",".join(f"{k}={weights[k]}" for k in sorted(weights))


def routing_of(
    project_dir: Path, read: Stack, before: dict[str, int], after: dict[str, int]
) -> Routing:
    """What moving the stack `read` from `before` to `after` changes."""
    try:
        d = diff_plans(plan_with(project_dir, read, before), plan_with(project_dir, read, after))
    except PolicyStopped as exc:
        return Routing(frozenset(), [str(exc)])
    return judge_diff(d)


def judge_diff(d: PlanDiff) -> Routing:
    """The routing a plan diff makes, and what it changes besides."""
    refused = [f"+ {r['type']} {r['name']} (added)" for r in d.added]
    refused += [f"- {r['type']} {r['name']} (removed)" for r in d.removed]
    urns = set()
    for change in d.changed:
        if change.replace:
            refused.append(f"~ {change.type} {change.name}: replaced ({', '.join(change.replace)})")
            continue
        if change.type == LISTENER_RULE_TYPE:
            other = [p for p in change.paths if not WEIGHT_PATH.match(p)]
        elif change.type == RULES_TYPE:
            other = [p for p in change.paths if p != RULES_PATH]
            data = next((v for v in change.values if v[0] == RULES_PATH), None)
            if data is not None:
                other += _rules_beyond_routing(data[1], data[2])
        else:
            other = change.paths
        if other:
            refused.append(f"~ {change.type} {change.name}: {', '.join(other)}")
        else:
            urns.add(change.urn)
    refused += [f"~ Kubernetes manifest {name}" for name in d.manifests]
    refused += [
        f"new mandatory policy finding {v['policy']}: {v['message']}"
        for v in d.new_violations
        if v.get("enforcement") == "mandatory"
    ]
    refused += [f"{c.endpoint}: {c.message}" for c in d.mandatory_failures]
    return Routing(frozenset(urns), refused)


def _rules_beyond_routing(before: Any, after: Any) -> list[str]:
    """What differs between two rule files besides the alerts' `action` lines and the
    candidate-against-baseline alert, one line per rule group."""
    a, b = _groups(before), _groups(after)
    out = []
    for name in sorted(a.keys() | b.keys()):
        if name not in a or name not in b:
            out.append(f"data: rule group {name} {'added' if name in b else 'removed'}")
        elif _without_routing(a[name]) != _without_routing(b[name]):
            out.append(f"data: rule group {name}: rules other than the rollback lines")
    return out


def _groups(text: Any) -> dict[str, dict]:
    doc = yaml.safe_load(text) if isinstance(text, str) else None
    groups = (doc or {}).get("groups") or []
    return {g.get("name"): g for g in groups}


def _without_routing(group: dict) -> dict:
    rules = []
    for rule in group.get("rules") or []:
        if rule.get("alert") == COMPARISON_ALERT:
            continue
        if "alert" in rule:
            notes = {k: v for k, v in (rule.get("annotations") or {}).items() if k != "action"}
            rule = {**rule, "annotations": notes}
        rules.append(rule)
    return {**group, "rules": rules}
