"""Benchmark: the offline plan against the SDK import floor, and how fast each command starts.

  .venv/bin/python -m bench.plan [--runs 5] [--stack dev]

Each command runs as a child process, as a user runs it, `--runs` times, interleaved (the order
rotates every round, so a noisy neighbour slows every row alike); the table shows the median,
min and max wall seconds and the median CPU seconds (getrusage(RUSAGE_CHILDREN) deltas), then
the ratios and the targets (PLAN_MAX_SECONDS and the two below it), met or missed:

- `plan <stack>`: `hyperpod-dpd plan --stack dev` into a temporary directory;
- `SDK import floor`: a bare `import` of the SDK modules the program needs (FLOOR_IMPORTS).
  The SDKs load lazily: that import does not yet load a single resource class;
- `SDK classes floor`: the same, and then every resource class the plan registers (read off
  the plan's resources.json): what any program that creates these resources pays before it
  creates the first one. The difference to this row is the plan's registrations (the SDK's
  first-use type-hint evaluation and per-resource work among them: profile it before calling
  it ours), the mock engine, our modules and the files it writes;
- `--help` of `hyperpod-dpd`, `size` and `checkpoint upload`: what a command costs before it
  does anything.

Our modules are byte-compiled first (`compileall`, what Python does on a first run and pip on
install): PYTHONDONTWRITEBYTECODE, set in some sandboxes, would otherwise make every run compile
them from source, which the SDKs (compiled by pip) never pay. Nothing here is a test: numbers
depend on the machine.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
PACKAGES = (
    "core", "settings", "specs", "checkpoint", "infra", "policies", "workloads", "hyperpod_dpd",
)  # fmt: skip
# The floor: the SDK modules the program registers its resources with.
FLOOR_IMPORTS = (
    "import pulumi, pulumi_aws.ec2, pulumi_aws.eks, pulumi_aws.iam, pulumi_aws.s3, "
    "pulumi_aws_native.sagemaker, pulumi_kubernetes.core.v1, pulumi_kubernetes.helm.v3, "
    "pulumi_kubernetes.apiextensions"
)
# The targets: the plan within 3 s and twice the SDK import floor, --help within 0.3 s.
PLAN_MAX_SECONDS = 3.0
PLAN_MAX_FLOOR_RATIO = 2.0
HELP_MAX_SECONDS = 0.3


def sdk_classes(resource_types: set[str]) -> str:
    """Python that imports the SDK class behind each resource type token of a plan:
    `aws:ec2/subnet:Subnet` is pulumi_aws.ec2.Subnet, `kubernetes:helm.sh/v3:Release`
    pulumi_kubernetes.helm.v3.Release, a custom resource pulumi_kubernetes.apiextensions
    .CustomResource, `pulumi:providers:aws-native` pulumi_aws_native.Provider. Component types
    (ours) are skipped."""
    sdks = {
        "aws": "pulumi_aws",
        "aws-native": "pulumi_aws_native",
        "kubernetes": "pulumi_kubernetes",
    }
    found = set()
    for token in resource_types:
        package, module, name = token.split(":")
        if package == "pulumi" and module == "providers" and name in sdks:
            found.add((sdks[name], "Provider"))
        elif package == "kubernetes" and module == "helm.sh/v3":
            found.add(("pulumi_kubernetes.helm.v3", name))
        elif package == "kubernetes" and module.split("/")[0] in ("core", "batch", "apps", "rbac"):
            found.add((f"pulumi_kubernetes.{module.replace('/', '.')}", name))
        elif package == "kubernetes":
            found.add(("pulumi_kubernetes.apiextensions", "CustomResource"))
        elif package in sdks:
            found.add((f"{sdks[package]}.{module.split('/')[0]}", name))
    lines = [f"from {module} import {name}" for module, name in sorted(found)]
    return "\n".join(lines)


@dataclass
class Command:
    name: str
    argv: list[str]


def _bare(code: str) -> str:
    """`code` as the console script runs a plan: the cyclic collector off, no interpreter
    teardown (hyperpod_dpd/cli/__init__.py), so a floor never pays what the plan does not."""
    return f"import gc, os\ngc.disable()\n{code}\nos._exit(0)"


def plan_argv(stack: str, out: Path) -> list[str]:
    return [str(BIN / "hyperpod-dpd"), "plan", "--stack", stack, "--out", str(out)]


def commands(stack: str, out: Path, classes: str) -> list[Command]:
    cli = str(BIN / "hyperpod-dpd")
    return [
        Command(f"plan {stack}", plan_argv(stack, out)),
        Command("SDK import floor", [sys.executable, "-c", _bare(FLOOR_IMPORTS)]),
        Command("SDK classes floor", [sys.executable, "-c", _bare(f"{FLOOR_IMPORTS}\n{classes}")]),
        Command("hyperpod-dpd --help", [cli, "--help"]),
        Command("size --help", [cli, "size", "--help"]),
        Command("checkpoint upload --help", [cli, "checkpoint", "upload", "--help"]),
    ]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(command: Command) -> tuple[float, float]:
    """Wall and CPU seconds of one run of `command`; exits naming it if it fails."""
    cpu = _children_cpu()
    start = time.perf_counter()
    proc = subprocess.run(command.argv, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{command.name} failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
    return wall, _children_cpu() - cpu


def interleaved(
    cmds: list[Command], runs: int, warm: set[str] = frozenset()
) -> dict[str, list[tuple[float, float]]]:
    """`runs` measured rounds, after one unmeasured round (the page cache warm for every row
    alike) of the commands not already in `warm`."""
    samples: dict[str, list[tuple[float, float]]] = {c.name: [] for c in cmds}
    for command in cmds:
        if command.name not in warm:
            run_once(command)
    for i in range(runs):
        for command in cmds[i % len(cmds) :] + cmds[: i % len(cmds)]:
            samples[command.name].append(run_once(command))
    return samples


BUSY_LOAD = 0.5  # per core: above it, something else competes for the cores being measured


def report(
    samples: dict[str, list[tuple[float, float]]], stack: str, runs: int, load: float
) -> None:
    """Print the table, the ratios and the targets, met or missed."""
    median = {name: statistics.median(w for w, _ in s) for name, s in samples.items()}
    cores = os.cpu_count() or 1
    print(
        f"medians of {runs} runs, interleaved; {cores} cores; Python {sys.version.split()[0]}; "
        f"load average before measuring {load:.2f}"
    )
    if load > BUSY_LOAD * cores:
        print(f"warning: the host was busy (load {load:.2f} on {cores} cores): every number "
              "below is inflated; rerun on a quiet machine before quoting them")  # fmt: skip
    print(f"{'command':<28} {'median s':>9} {'min s':>7} {'max s':>7} {'CPU s':>7}")
    for name, s in samples.items():
        walls = [w for w, _ in s]
        cpu = statistics.median(c for _, c in s)
        print(f"{name:<28} {median[name]:>9.3f} {min(walls):>7.3f} {max(walls):>7.3f} {cpu:>7.3f}")
    plan, floor = median[f"plan {stack}"], median["SDK import floor"]
    ratio = plan / floor
    classes = median["SDK classes floor"]
    print(f"\nplan / SDK import floor: {ratio:.2f}x")
    print(f"plan / SDK classes floor: {plan / classes:.2f}x ({plan - classes:.2f} s above it)")
    checks = [
        (f"plan {stack} <= {PLAN_MAX_SECONDS} s", plan <= PLAN_MAX_SECONDS, f"{plan:.2f} s"),
        (f"plan <= {PLAN_MAX_FLOOR_RATIO}x floor", ratio <= PLAN_MAX_FLOOR_RATIO, f"{ratio:.2f}x"),
    ]
    for name in ("hyperpod-dpd --help", "size --help", "checkpoint upload --help"):
        checks.append((f"{name} <= {HELP_MAX_SECONDS} s", median[name] <= HELP_MAX_SECONDS,
                       f"{median[name]:.3f} s"))  # fmt: skip
    print("\ntargets:")
    for what, met, value in checks:
        print(f"  {'met   ' if met else 'MISSED'} {what:<36} {value}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=5, help="measured runs per command (5)")
    parser.add_argument("--stack", default="dev", help="the stack to plan (dev)")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error(f"--runs: {args.runs} is not a positive number of runs")
    for package in PACKAGES:
        compileall.compile_dir(ROOT / package, quiet=2)
    load = os.getloadavg()[0]  # the last minute's, before our first run: what else is running
    with tempfile.TemporaryDirectory(prefix="bench-plan-") as out:
        plan = Command(f"plan {args.stack}", plan_argv(args.stack, Path(out)))
        run_once(plan)  # its warm-up round, and the resource types the classes floor loads
        resources = json.loads((Path(out) / "resources.json").read_text())
        cmds = commands(args.stack, Path(out), sdk_classes({r["type"] for r in resources}))
        samples = interleaved(cmds, args.runs, warm={plan.name})
    # Numbers, not a verdict: a missed target is printed, and `make bench` goes on to the next.
    report(samples, args.stack, args.runs, load)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
