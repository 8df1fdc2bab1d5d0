"""The offline plan: run the program for a stack under mocks and write what it would deploy.

Outputs in build/plan/<stack>/ (or --out):
  resources.json       every registered resource (type, name, urn, parent, provider, dependsOn,
                       protect, inputs), secret values as "[secret]"
  manifests/           one YAML per Kubernetes object, <kind>.<namespace>.<name>.yaml
  policy-report.json   {"violations": [...]} from policies/rules
  summary.md           resources by type, the endpoint at a glance, sizing, violations, the
                       hourly cost estimate, stack outputs
  plan.json            stack, hourly cost lines and sizing numbers (what `diff` compares)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from core.exits import EXIT_FAILED, EXIT_OK
from core.vocabulary import DIFF_RULE_NAMES
from hyperpod_dpd.plan.endpoint_summary import endpoint_rows
from hyperpod_dpd.plan.engine import ProgramRun, run_program
from hyperpod_dpd.plan.summary import cold_start_json, render_summary
from hyperpod_dpd.shared.cost import hourly_cost, total
from hyperpod_dpd.shared.images import images_json
from hyperpod_dpd.shared.output_dirs import claim, clear, removed_unless_finished
from policies.gate import HANDED_JUDGEMENT, Judgement, PolicyStop, judgement
from policies.rules import Violation
from program.stack_config import HANDED_SETTINGS
from settings import StackSettings
from settings.stack import endpoint_sizing
from settings.stack_file import Stack, StackFile, read_stack

STOPPED = (
    "The program stopped at the policy gate, as `pulumi up` would: {registered} resources were "
    "registered before the stop. Fix the mandatory violations below and plan again."
)
CLUSTER_SCOPE = "_cluster"
# What a plan writes in its directory (the docstring above): a directory holding anything else
# is refused, never emptied.
PLAN_OUTPUTS = (
    "resources.json",
    "manifests",
    "policy-report.json",
    "plan.json",
    "summary.md",
)  # not a valid namespace name, so it cannot clash with one


@dataclass
class Plan:
    stack: StackFile
    settings: StackSettings
    run: ProgramRun
    violations: list[Violation]
    manifests: dict[str, dict[str, Any]]  # file name -> manifest
    out_dir: Path
    stopped: bool = False  # the program stopped at the policy gate
    registered_before_stop: int = 0  # what the program registered before it stopped (0)

    @property
    def stopped_text(self) -> str:
        return STOPPED.format(registered=self.registered_before_stop)

    @property
    def exit_code(self) -> int:
        mandatory = any(v.enforcement == "mandatory" for v in self.violations)
        return EXIT_FAILED if mandatory else EXIT_OK


def make_plan(
    project_dir: Path,
    stack: str,
    out_dir: Path | None = None,
    preview: bool = False,
    read: Stack | None = None,
) -> Plan:
    """Plan `stack` (`preview`: as the first `pulumi preview` of a new stack sees it, outputs of
    resources not created yet unknown; `read`: the stack as already read, e.g. with a config
    value of a step not written yet). Raises ConfigError on bad config (nothing written)."""
    read = read or read_stack(project_dir, stack)
    # Only a valid config gets an output directory: a bad one writes nothing, an interrupted
    # plan leaves none it had only begun.
    out_dir = out_dir or project_dir / "build" / "plan" / stack
    with removed_unless_finished(out_dir):
        claim(out_dir, PLAN_OUTPUTS, "`hyperpod-dpd plan`")
        plan = _plan(project_dir, stack, read, out_dir, preview)
        write_plan(plan)
    return plan


def _plan(project_dir: Path, stack: str, read: Stack, out_dir: Path, preview: bool) -> Plan:
    """Judge the stack and run its program (the plan's files not written yet)."""
    stack_file, settings = read.file, read.settings
    # Judged once, here; the program takes these settings and this judgement rather than read
    # and judge the same config again, and stops at its gate on them as `pulumi up` would.
    verdict = judgement(settings, stack_file.project, stack, has_hf_token=stack_file.has_hf_token)
    recorded: list = []
    try:
        run = run_judged(project_dir, read, stack, verdict, recorded=recorded, preview=preview)
    except PolicyStop:
        # The program's gate refused, as in `pulumi up`: what did it register before?
        run, halted, registered = ProgramRun([], {}), True, len(recorded)
    else:
        halted, registered = False, 0
        run.resources.sort(key=lambda r: r.urn)  # registration order is async: stable files
    return Plan(
        stack=stack_file,
        settings=settings,
        run=run,
        violations=verdict.violations,
        manifests=kubernetes_manifests(run),
        out_dir=out_dir,
        stopped=halted,
        registered_before_stop=registered,
    )


def run_judged(
    project_dir: Path,
    read: Stack,
    stack: str,
    verdict: Judgement | None = None,
    *,
    recorded: list | None = None,
    preview: bool = False,
) -> ProgramRun:
    """The program run under mocks on the stack as read. Judged once (here, or by the caller
    that hands `verdict`): the program takes these settings and this judgement rather than read
    and judge the same config again, and stops at its gate on them as `pulumi up` would
    (PolicyStop)."""
    file, settings = read.file, read.settings
    if verdict is None:
        verdict = judgement(settings, file.project, stack, has_hf_token=file.has_hf_token)
    return run_program(
        project_dir / "__main__.py",
        file.config,
        file.secret_keys,
        project=file.project,
        stack=stack,
        recorded=recorded,
        preview=preview,
        handed={HANDED_SETTINGS: settings, HANDED_JUDGEMENT: verdict},
    )


def kubernetes_manifests(run: ProgramRun) -> dict[str, dict[str, Any]]:
    """Kubernetes objects as they would be sent to the API server, keyed by file name."""
    manifests = {}
    for r in run.resources:
        if not (r.custom and r.type.startswith("kubernetes:") and "kind" in r.inputs):
            continue  # providers, Helm releases and other non-object resources
        meta = r.inputs.get("metadata") or {}
        namespace = meta.get("namespace") or CLUSTER_SCOPE
        file = f"{r.inputs['kind']}.{namespace}.{meta.get('name', r.name)}.yaml".lower()
        manifests[file] = r.inputs
    return manifests


_HEAD = ("apiVersion", "kind", "metadata", "spec")


class _ManifestDumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """libyaml's emitter when PyYAML has it (50x faster on the code ConfigMap), else PyYAML's:
    with no line wrapping and multi-line strings as literal blocks, both write the same text,
    so plans compare equal across machines, and a code change reads as a code diff."""


def _literal_multiline(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_ManifestDumper.add_representer(str, _literal_multiline)
_NO_WRAP = 10**9


def render_manifest(manifest: dict[str, Any]) -> str:
    """YAML with apiVersion, kind, metadata, spec first and every map sorted: stable diffs."""
    head = {k: manifest[k] for k in _HEAD if k in manifest}
    rest = {k: manifest[k] for k in sorted(manifest) if k not in _HEAD}
    doc = _sorted({**head, **rest}, top=True)
    return yaml.dump(doc, Dumper=_ManifestDumper, sort_keys=False, width=_NO_WRAP)


def _sorted(value: Any, top: bool = False) -> Any:
    if isinstance(value, dict):
        keys = list(value) if top else sorted(value)
        return {k: _sorted(value[k]) for k in keys}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def write_plan(plan: Plan) -> None:
    out = plan.out_dir
    clear(out, PLAN_OUTPUTS)  # stale manifests of removed objects must not linger
    (out / "manifests").mkdir(parents=True)
    resources = [r.to_json() for r in plan.run.resources]
    (out / "resources.json").write_text(json.dumps(resources, indent=2, sort_keys=True) + "\n")
    for file, manifest in plan.manifests.items():
        (out / "manifests" / file).write_text(render_manifest(manifest))
    report = {"violations": [v.to_json() for v in plan.violations]}
    (out / "policy-report.json").write_text(json.dumps(report, indent=2) + "\n")
    (out / "plan.json").write_text(json.dumps(plan_facts(plan), indent=2, sort_keys=True) + "\n")
    (out / "summary.md").write_text(render_summary(plan))


def plan_facts(plan: Plan) -> dict[str, Any]:
    """What `hyperpod-dpd diff` compares besides resources and manifests."""
    sizing = endpoint_sizing(plan.settings)
    lines = hourly_cost(plan.settings)
    return {
        "stack": plan.stack.stack,
        "project": plan.stack.project,
        "stopped": plan.stopped,
        "registeredBeforeStop": plan.registered_before_stop,
        # Each endpoint at a glance (mode, groups, GPUs, hourly, traffic): the PR comment's table.
        "endpoints": endpoint_rows(plan.settings),
        # Each endpoint's numbers per pool, with where each came from (settings/endpoint/numbers.py).
        "numbers": {entry.label: entry.numbers.to_json() for entry in plan.settings.entries()},
        # A new worker's start per endpoint and pool, by phase, caches off and on.
        "coldStart": cold_start_json(plan.settings),
        # Each image the stack runs, pinned by digest or by tag alone (hyperpod-dpd-images-by-digest).
        "images": images_json(plan.settings),
        # The levels of the rules `diff` judges against the base plan (this stack's policy).
        "diffRules": {name: plan.settings.policy.diff_rule_level(name) for name in DIFF_RULE_NAMES},
        "costPerHour": {
            "total": total(lines),
            "lines": [
                {"item": c.item, "quantity": c.quantity, "hourly": c.hourly, "source": c.source}
                for c in lines
            ],
        },
        "sizing": None
        if sizing is None
        else {
            "transfersInFlight": sizing.transfers_in_flight,
            "pdBufferChunks": sizing.pd_buffer_chunks,
            "prefillHeadroomGiB": round(sizing.prefill.headroom_bytes / 2**30, 2),
            "decodeHeadroomGiB": round(sizing.decode.headroom_bytes / 2**30, 2),
        },
    }
