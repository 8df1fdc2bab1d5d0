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
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from core.units import format_gib
from hyperpod_dpd.cost import hourly_cost, total
from hyperpod_dpd.engine import ProgramRun, run_program
from hyperpod_dpd.stackfile import StackFile, load_stack
from policies.gate import PolicyStop, judge
from policies.rules import Violation
from settings import ConfigError, ConfigProblem, StackSettings, parse_settings
from settings.endpoint_sizing import endpoint_sizing
from specs.desired import desired_state

EXIT_OK, EXIT_VIOLATION, EXIT_CONFIG = 0, 1, 2
STOPPED = (
    "The program stopped at the policy gate, as `pulumi up` would: {registered} resources were "
    "registered before the stop. Fix the mandatory violations below and plan again."
)
CLUSTER_SCOPE = "_cluster"  # not a valid namespace name, so it cannot clash with one


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
        return EXIT_VIOLATION if mandatory else EXIT_OK


def make_plan(
    project_dir: Path, stack: str, out_dir: Path | None = None, preview: bool = False
) -> Plan:
    """Plan `stack` (`preview`: as the first `pulumi preview` of a new stack sees it, outputs of
    resources not created yet unknown). Raises ConfigError on bad config (nothing written)."""
    stack_file = load_stack(project_dir, stack)
    # Validate before running the program: the same function the program calls first.
    config = stack_file.decoded()
    settings = parse_settings(config, stack_file.secret_keys)
    # Only a valid config gets an output directory: a bad one writes nothing.
    out_dir = writable_out_dir(out_dir or project_dir / "build" / "plan" / stack)
    # The gate's report: the same pure function of the settings the program's gate runs.
    has_token = bool(config.get(f"{stack_file.project}:hfToken"))
    desired = desired_state(settings, stack_file.project, stack, has_hf_token=has_token)
    violations = judge(desired)
    recorded: list = []
    try:
        run = run_program(
            project_dir / "__main__.py",
            stack_file.config,
            stack_file.secret_keys,
            project=stack_file.project,
            stack=stack,
            recorded=recorded,
            preview=preview,
        )
    except PolicyStop:
        # The program's gate refused, as in `pulumi up`: what did it register before?
        run, halted, registered = ProgramRun([], {}), True, len(recorded)
    else:
        halted, registered = False, 0
        run.resources.sort(key=lambda r: r.urn)  # registration order is async: stable files
    plan = Plan(
        stack=stack_file,
        settings=settings,
        run=run,
        violations=violations,
        manifests=kubernetes_manifests(run),
        out_dir=out_dir,
        stopped=halted,
        registered_before_stop=registered,
    )
    write_plan(plan)
    return plan


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


def writable_out_dir(out: Path) -> Path:
    """`out`, made; ConfigError naming --out when it cannot be (checked before planning)."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".hyperpod-dpd-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        problem = ConfigProblem(
            "--out",
            str(out),
            "a directory this user can create and write",
            f"pick another ({exc.strerror})",
        )
        raise ConfigError([problem], source="command line") from None
    return out


def write_plan(plan: Plan) -> None:
    out = plan.out_dir
    if out.exists():
        shutil.rmtree(out)  # stale manifests of removed objects must not linger
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


def resource_counts(plan: Plan) -> list[tuple[str, int]]:
    return sorted(Counter(r.type for r in plan.run.resources).items())


def endpoint_facts(settings: StackSettings) -> list[tuple[str, str]]:
    e = settings.endpoint
    groups = ", ".join(
        f"{name}: {g.instance_count} x {g.instance_type} ({g.role})"
        for name, g in settings.instance_groups.items()
    )
    facts = [
        ("Endpoint", f"{e.name} in namespace {e.namespace}, mode {e.mode}"),
        ("Model", f"{e.model} from {settings.checkpoint.source}@{settings.checkpoint.revision}"),
        ("Image", e.image),
        (
            "Inference operator",
            f"{settings.inference_operator.version} (EKS add-on "
            f"{settings.inference_operator.addon_version})",
        ),
        ("Region / GPU AZ", f"{settings.region} / {settings.availability_zone_id}"),
        ("Instance groups", groups),
        (
            "vLLM",
            f"TP {e.tensor_parallel_size}, max-model-len {e.max_model_len}, "
            f"gpu-memory-utilization {e.gpu_memory_utilization}",
        ),
    ]
    if e.mode == "dpd":
        facts += [
            ("Replicas", f"prefill {e.prefill.replicas}, decode {e.decode.replicas}"),
            ("Routing", f"threshold {e.routing_threshold} tokens, {e.routing_strategy}"),
            ("PD buffer", f"{format_gib(e.pd_buffer_size)} per TP rank"),
        ]
    return facts


def render_sizing(settings: StackSettings) -> list[str]:
    r = endpoint_sizing(settings)
    if r is None:
        return ["", "## Sizing", "", "Not sized: the decode instance type is not a DPD type."]
    gib = 2**30
    lines = [
        "",
        f"## Sizing ({r.model} on {r.instance_type}, TP {r.tensor_parallel_size})",
        "",
        "| | |",
        "|---|---|",
        f"| KV per token per rank | {r.kv_bytes_per_token_per_rank:,} B |",
        f"| LMCache chunk | {r.chunk_tokens} tokens = {r.chunk_bytes / 2**20:g} MiB |",
        f"| Transfer of {r.prompt_tokens:,} tokens | {r.prompt_chunks} chunks, "
        f"{r.transfer_gib} GiB |",
        f"| PD buffer | {format_gib(r.pd_buffer_bytes)} = {r.pd_buffer_chunks} chunks |",
        f"| Transfers in flight | {r.transfers_in_flight} |",
        f"| Headroom per GPU | prefill {r.prefill.headroom_bytes / gib:.2f} GiB, "
        f"decode {r.decode.headroom_bytes / gib:.2f} GiB |",
    ]
    if r.recommended_pd_buffer_bytes:
        lines.append(
            f"| Recommended PD buffer for {r.expected_in_flight} in flight | "
            f"{format_gib(r.recommended_pd_buffer_bytes)} |"
        )
    lines += [f"\n- {w}" for w in r.warnings]
    return lines


def render_cost(settings: StackSettings) -> list[str]:
    lines = hourly_cost(settings)
    out = ["", f"## Cost per hour: ${total(lines):,.2f} (estimate)", ""]
    out += ["| item | quantity | hourly | source |", "|---|---|---|---|"]
    for c in lines:
        price = "unknown" if c.hourly is None else f"${c.hourly:,.3f}"
        out.append(f"| {c.item} | {c.quantity} | {price} | {c.source} |")
    return out


def render_summary(plan: Plan) -> str:
    lines = [f"# Offline plan: stack `{plan.stack.stack}`", ""]
    lines += ["## Endpoint", "", "| | |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in endpoint_facts(plan.settings)]
    lines += render_sizing(plan.settings)
    lines += ["", f"## Resources ({len(plan.run.resources)})", "", "| type | count |", "|---|---|"]
    lines += [f"| `{t}` | {n} |" for t, n in resource_counts(plan)]
    if plan.stopped:
        lines += ["", plan.stopped_text]
    lines += ["", f"## Policy violations ({len(plan.violations)})", ""]
    if plan.violations:
        lines += ["| policy | enforcement | resource | message |", "|---|---|---|---|"]
        lines += [
            f"| {v.policy} | {v.enforcement} | `{v.urn.rsplit('::', 1)[-1]}` | {v.message} |"
            for v in plan.violations
        ]
    else:
        lines.append("None.")
    lines += render_cost(plan.settings)
    lines += ["", "## Stack outputs", "", "| output | value |", "|---|---|"]
    lines += [f"| {k} | `{json.dumps(v)}` |" for k, v in sorted(plan.run.outputs.items())]
    return "\n".join(lines) + "\n"
