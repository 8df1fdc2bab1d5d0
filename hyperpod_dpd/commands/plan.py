"""`hyperpod-dpd plan --stack S [--out DIR] [--format text|json]`: the offline plan of a stack.

Exit codes: 0 fine (advisories allowed), 1 a mandatory policy violation, 2 bad configuration,
3 an internal error (rerun with --debug for the traceback).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from core.collector import collector_paused


def register(subparsers: argparse._SubParsersAction) -> None:
    plan = subparsers.add_parser("plan", help="offline plan of a stack (no cloud, no Pulumi CLI)")
    plan.add_argument("--stack", required=True, help="stack name: reads Pulumi.<stack>.yaml")
    plan.add_argument("--out", type=Path, help="output directory (default build/plan/<stack>)")
    plan.add_argument("--format", choices=["text", "json"], default="text")
    plan.add_argument("--project-dir", type=Path, help="directory of Pulumi.yaml (default: found)")
    plan.add_argument(
        "--preview",
        action="store_true",
        help="plan as the first `pulumi preview` of a new stack sees it (outputs unknown)",
    )
    plan.set_defaults(handler=run)


def run(args: argparse.Namespace, project_dir: Path) -> int:
    # A plan builds a large, long-lived heap (SDK modules, the program's resources) and frees
    # next to nothing: the cyclic collector would rescan it over and over for nothing.
    with collector_paused(frozen=False):
        from hyperpod_dpd.plan import make_plan

        plan = make_plan(project_dir, args.stack, args.out, preview=args.preview)
    print(json.dumps(plan_json(plan), indent=2) if args.format == "json" else render_text(plan))
    return plan.exit_code


def plan_json(plan: Any) -> dict:
    from hyperpod_dpd.plan import resource_counts

    return {
        "stack": plan.stack.stack,
        "exitCode": plan.exit_code,
        "resources": len(plan.run.resources),
        "stopped": plan.stopped,
        "registeredBeforeStop": plan.registered_before_stop,
        "byType": dict(resource_counts(plan)),
        "manifests": sorted(plan.manifests),
        "violations": [v.to_json() for v in plan.violations],
        "outDir": str(plan.out_dir),
    }


def render_text(plan: Any) -> str:
    from hyperpod_dpd.plan import resource_counts

    s = plan.settings
    counts = resource_counts(plan)
    width = max((len(t) for t, _ in counts), default=4)
    lines = [
        f"Offline plan of stack '{plan.stack.stack}': {s.region}, GPU AZ {s.availability_zone_id}, "
        f"endpoint {s.endpoint.name} ({s.endpoint.mode})",
        "",
        f"  {'TYPE'.ljust(width)}  COUNT",
        *(f"  {t.ljust(width)}  {n:>5}" for t, n in counts),
        f"  {'total'.ljust(width)}  {len(plan.run.resources):>5}",
        "",
    ]
    if plan.stopped:
        lines = [lines[0], "", plan.stopped_text, ""]
    if plan.violations:
        for level in ("mandatory", "advisory"):
            found = [v for v in plan.violations if v.enforcement == level]
            if found:
                lines.append(f"Policy violations, {level} ({len(found)}):")
                lines += [f"  {v.policy}: {v.urn.rsplit('::', 1)[-1]}: {v.message}" for v in found]
    else:
        lines.append("Policy violations: none")
    lines.append(
        f"Wrote {plan.out_dir}/: resources.json, manifests/ ({len(plan.manifests)}), "
        "policy-report.json, summary.md"
    )
    return "\n".join(lines)
