"""`hyperpod-dpd ci`, run. The parser is hyperpod_dpd/cli/ci.py."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from core.exits import EXIT_OK
from core.json_output import dumps
from core.problems import MISSING, ConfigError, ConfigProblem
from hyperpod_dpd.ci.bootstrap import bootstrap_command, bootstrap_targets
from hyperpod_dpd.ci.runner import runs_on
from settings import StackSettings
from settings.config.errors import full_key, set_fix
from settings.stack_file import Stack, read_stack


def run(args: argparse.Namespace, project_dir: Path) -> int:
    read = read_stack(project_dir, args.stack)
    if args.bootstrap:
        print(_bootstrap(read, args.stack, project_dir))
        return EXIT_OK
    if args.job == "deploy":
        others = _other_stacks(project_dir, args.stack)
        problems = shared_account_problems(args.stack, read.settings, others)
        if problems:
            raise ConfigError(problems, f"stack {args.stack}'s CI settings (deploy job)")
    facts = job_facts(read.settings, args.stack, args.job, *_run_of(args, read.settings))
    if args.format == "json":  # camelCase as every JSON of ours; the github lines keep their names
        print(dumps({_camel(key): value for key, value in facts.items()}))
    else:
        for key, value in facts.items():
            text = value if isinstance(value, str) and key != "runs-on" else json.dumps(value)
            print(f"{key}={text}")
    return EXIT_OK


def job_facts(s: StackSettings, stack: str, job: str, run_id: str, attempt: str) -> dict[str, Any]:
    """What a `job` (deploy or preview) of `stack` reads: its runner, Region, role and Pulumi
    organization. ConfigError naming every key the job lacks."""
    ci, problems = s.ci, []
    role_field = "deployRoleArn" if job == "deploy" else "previewRoleArn"
    role = ci.deploy_role_arn if job == "deploy" else ci.preview_role_arn
    if job == "preview" and not ci.pull_request_preview:
        key = full_key(("ci", "pullRequestPreview"))
        problems.append(
            ConfigProblem(
                key,
                False,
                f"true for a stack pull requests preview ({stack}'s is not: only dev's should)",
                f"preview another stack, or {set_fix(key, True)} on a stack whose secrets "
                "branch code may read",
            )
        )
    elif role is None:
        key = full_key(("ci", role_field))
        output = "DeployRoleArn" if job == "deploy" else "PreviewRoleArn"
        problems.append(
            ConfigProblem(
                key,
                MISSING,
                f"the role a {job} job assumes with its GitHub OIDC token",
                f"deploy ci/aws-github-oidc.yaml for {stack} and {set_fix(key)} (its {output} "
                "output)",
            )
        )
    if ci.pulumi_organization is None:
        key = full_key(("ci", "pulumiOrganization"))
        problems.append(
            ConfigProblem(
                key,
                MISSING,
                "the Pulumi Cloud organization whose OIDC policies give the job its token",
                set_fix(key),
            )
        )
    if problems:
        raise ConfigError(problems, f"stack {stack}'s CI settings ({job} job)")
    return {
        "runs-on": runs_on(s, stack, run_id, attempt),
        "region": s.region,
        "role-arn": role,
        "pulumi-organization": ci.pulumi_organization,
    }


def shared_account_problems(
    stack: str, s: StackSettings, others: dict[str, StackSettings]
) -> list[ConfigProblem]:
    """A protected stack (hyperpod-dpd:protect: prod) in an account another stack deploys to.
    Every deploy role administers its whole account (ci/aws-github-oidc.yaml: the stack creates
    IAM roles, a VPC, EKS), and the other stacks deploy without prod's reviewer (dev on every
    merge, the canary's rollout on a schedule): sharing the account hands them prod."""
    role = s.ci.deploy_role_arn
    if not s.protect or role is None:
        return []
    account = role.split(":")[4]
    sharing = sorted(
        name
        for name, other in others.items()
        if other.ci.deploy_role_arn and other.ci.deploy_role_arn.split(":")[4] == account
    )
    if not sharing:
        return []
    key = full_key(("ci", "deployRoleArn"))
    return [
        ConfigProblem(
            key,
            role,
            f"a role in an AWS account no other stack deploys to ({', '.join(sharing)} "
            f"deploy{'s' * (len(sharing) == 1)} to {account} too, and every deploy role "
            "administers its whole account)",
            f"give {stack} an account of its own (AWS Organizations) and deploy "
            "ci/aws-github-oidc.yaml there (docs/deploy.md, 'CI credentials')",
        )
    ]


def _other_stacks(project_dir: Path, stack: str) -> dict[str, StackSettings]:
    """The project's other stack files that read (a broken one is its own deploy's problem)."""
    others = {}
    for path in sorted(project_dir.glob("Pulumi.*.yaml")):
        name = path.name.removeprefix("Pulumi.").removesuffix(".yaml")
        if name == stack:
            continue
        try:
            others[name] = read_stack(project_dir, name).settings
        except ConfigError:
            continue
    return others


def _run_of(args: argparse.Namespace, s: StackSettings) -> tuple[str, str]:
    """The workflow run's id and attempt: a CodeBuild runner's label names them."""
    run_id = args.run_id or os.environ.get("GITHUB_RUN_ID")
    attempt = args.run_attempt or os.environ.get("GITHUB_RUN_ATTEMPT")
    if s.ci.runner == "codebuild" and not (run_id and attempt):
        flag = "--run-id" if not run_id else "--run-attempt"
        raise ConfigError(
            [
                ConfigProblem(
                    flag,
                    MISSING,
                    "the workflow run's id and attempt (a CodeBuild runner's label names them)",
                    "run it inside the workflow (GITHUB_RUN_ID, GITHUB_RUN_ATTEMPT), or give "
                    "--run-id and --run-attempt",
                )
            ],
            "command line",
        )
    return run_id or "", attempt or ""


def _bootstrap(read: Stack, stack: str, project_dir: Path) -> str:
    """The first phase's `pulumi up` for a stack with a CodeBuild runner, or why none is needed."""
    if read.settings.ci.runner != "codebuild":
        return (
            f"# {stack}'s deploys do not run on a runner the stack creates "
            f"(hyperpod-dpd:ci.runner is {read.settings.ci.runner}): deploy it in one phase."
        )
    from hyperpod_dpd.plan.planner import run_judged

    done = run_judged(project_dir, read, stack)
    header = (
        f"# Phase 1 of {stack}'s first deploy, from a workstation with the deploy role: the "
        "CI runner\n# and what it needs (AWS resources only). Then run the deploy workflow for "
        "the rest\n# (docs/deploy.md, 'First deploy of a private stack').\n"
    )
    return header + bootstrap_command(stack, bootstrap_targets(done.resources))


def _camel(name: str) -> str:
    """'runs-on' -> 'runsOn': a GitHub output name as a JSON key."""
    head, *rest = name.split("-")
    return head + "".join(word.capitalize() for word in rest)
