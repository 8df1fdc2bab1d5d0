"""The first deploy of a stack whose deploys run on its own CodeBuild runner: the runner lives in
the VPC the stack creates, so the stack's first `pulumi up` cannot run there. It runs in two
phases instead (docs/deploy.md, "First deploy of a private stack"):

1. from a workstation, `pulumi up --target ...` of the runner and everything it needs (the VPC,
   its subnets, the NAT and routes, the EKS control plane whose API it reaches): AWS resources
   only, so no Kubernetes API is needed yet;
2. the deploy workflow, on the runner, for the rest.

The targets are the runner's component and its children, then everything they need,
transitively, read off the offline plan's graph: each resource's dependsOn (the SDK lists a
component dependency as that component's resources) and its parent components (the component
resource alone: a parent must exist before its child, not its other children). A `--target` list
that leaves out a dependency fails the update (Pulumi, "Targeted updates",
https://www.pulumi.com/docs/iac/guides/basics/targeted-updates/), and one that takes in a
Kubernetes object could not run from outside the VPC (a test holds that it takes none).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable

from core.vocabulary import CI_RUNNER
from hyperpod_dpd.plan.engine import RecordedResource

ROOT_STACK_TYPE = "pulumi:pulumi:Stack"


def bootstrap_targets(resources: Iterable[RecordedResource]) -> list[str]:
    """The URNs of the runner's resources and of everything they need, sorted."""
    by_urn = {r.urn: r for r in resources}
    runners = {r.urn for r in by_urn.values() if r.type == CI_RUNNER}
    todo = [u for u, r in by_urn.items() if u in runners or r.parent in runners]
    wanted: set[str] = set()
    while todo:
        urn = todo.pop()
        if urn in wanted or urn not in by_urn:
            continue  # the root stack and providers are no resource a --target names
        wanted.add(urn)
        r = by_urn[urn]
        todo += r.depends_on
        if r.parent and by_urn.get(r.parent) and by_urn[r.parent].type != ROOT_STACK_TYPE:
            todo.append(r.parent)
    return sorted(wanted)


def bootstrap_command(stack: str, targets: list[str]) -> str:
    """The `pulumi up` of the first phase, one --target per line, quoted for a POSIX shell."""
    lines = [f"pulumi up --stack {shlex.quote(stack)} --policy-pack build/policy-pack"]
    lines += [f"  --target {shlex.quote(urn)}" for urn in targets]
    return " \\\n".join(lines)
