"""`hyperpod-dpd`: the project's command line.

  hyperpod-dpd plan --stack dev [--out DIR] [--format text|json]
  hyperpod-dpd pulumi-yaml [--check]

Exit codes of `plan`: 0 fine (advisories allowed), 1 a mandatory policy violation, 2 bad
configuration, 3 an internal error (rerun with --debug for the traceback).
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from pathlib import Path

from hyperpod_dpd import checkpoint_cmd, diff, policy_cmd, preflight, size_cmd
from hyperpod_dpd.plan import EXIT_CONFIG, Plan, make_plan, resource_counts
from hyperpod_dpd.verify import cli as verify
from settings import ConfigError
from settings.declare import render_pulumi_yaml, render_readme

EXIT_INTERNAL = 3
_EXTRA_COMMANDS: list = [
    size_cmd.register,
    preflight.register,
    policy_cmd.register,
    checkpoint_cmd.register,
    diff.register,
    verify.register,
]


def find_project_dir(start: Path) -> Path:
    """The nearest directory holding Pulumi.yaml, as the Pulumi CLI finds it."""
    for directory in (start, *start.parents):
        if (directory / "Pulumi.yaml").exists():
            return directory
    return Path(__file__).resolve().parents[1]  # the checkout this package runs from


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hyperpod-dpd", description=__doc__.split("\n")[0])
    parser.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    sub = parser.add_subparsers(dest="command", required=True)
    plan = sub.add_parser("plan", help="offline plan of a stack (no cloud, no Pulumi CLI)")
    plan.add_argument("--stack", required=True, help="stack name: reads Pulumi.<stack>.yaml")
    plan.add_argument("--out", type=Path, help="output directory (default build/plan/<stack>)")
    plan.add_argument("--format", choices=["text", "json"], default="text")
    plan.add_argument("--project-dir", type=Path, help="directory of Pulumi.yaml (default: found)")
    plan.set_defaults(handler=_plan)
    gen = sub.add_parser("pulumi-yaml", help="regenerate Pulumi.yaml's config block from the model")
    gen.add_argument("--check", action="store_true", help="exit 1 if Pulumi.yaml is out of date")
    gen.add_argument("--project-dir", type=Path)
    gen.set_defaults(handler=_pulumi_yaml)
    # Commands of other modules: each `register(subparsers)` adds a parser whose defaults set
    # handler=<function(args, project_dir) -> exit code>.
    for register in _EXTRA_COMMANDS:
        register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    project_dir = args.project_dir or find_project_dir(Path.cwd())
    try:
        return args.handler(args, project_dir)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except Exception as exc:
        if args.debug:
            traceback.print_exc()
        print(f"internal error: {type(exc).__name__}: {exc} (rerun with --debug)", file=sys.stderr)
        return EXIT_INTERNAL


def _plan(args: argparse.Namespace, project_dir: Path) -> int:
    plan = make_plan(project_dir, args.stack, args.out)
    if args.format == "json":
        print(json.dumps(plan_json(plan), indent=2))
    else:
        print(render_text(plan))
    return plan.exit_code


def plan_json(plan: Plan) -> dict:
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


def render_text(plan: Plan) -> str:
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


def _pulumi_yaml(args: argparse.Namespace, project_dir: Path) -> int:
    """Pulumi.yaml's config block and README's configuration table, from the model."""
    stale = []
    for name, render in (("Pulumi.yaml", render_pulumi_yaml), ("README.md", render_readme)):
        path = project_dir / name
        current = path.read_text()
        wanted = render(current)
        if current != wanted:
            stale.append(name)
            if not args.check:
                path.write_text(wanted)
    if args.check and stale:
        print(f"{', '.join(stale)} out of date: run `make pulumi-yaml`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
