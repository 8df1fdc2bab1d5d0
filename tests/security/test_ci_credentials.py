"""No job that runs branch code holds a credential that can read or write prod.

The workflows hold no long-lived secret: each job's credentials are what its GitHub OIDC token
is trusted for, and the token's `sub` claim says where the job runs (GitHub docs, "About
security hardening with OpenID Connect", "Example subject claims"): `repo:R:environment:E` in
a job that names environment E, `repo:R:pull_request` in a pull request's job, else
`repo:R:ref:<ref>`. Who trusts which subject is code in this repository: the AWS roles
(ci/aws-github-oidc.yaml) and the Pulumi Cloud team policies (ci/pulumi-oidc-policies.json).
So the question "can branch code reach prod?" is answered here from the files alone: for every
job a pull request, a branch push or a dispatch from a branch can start, outside an
environment that admits the main branch only, the subjects it can present reach no stack but
those whose stack file lets pull requests preview them (dev), and never with write access.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from settings.stack_file import read_stack
from tests.conftest import ROOT

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
STACKS = sorted(
    p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in ROOT.glob("Pulumi.*.yaml")
)
AWS_ROLES = ROOT / "ci" / "aws-github-oidc.yaml"
PULUMI_POLICIES = ROOT / "ci" / "pulumi-oidc-policies.json"
GITHUB_TOKEN = "GITHUB_TOKEN"  # the job's own repository token: scoped by `permissions`


class _CfnLoader(yaml.SafeLoader):
    """CloudFormation's short forms (!Sub, !If, ...) as {"Fn::Sub": ...}."""


def _tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> dict[str, Any]:
    name = "Ref" if suffix == "Ref" else f"Fn::{suffix}"
    if isinstance(node, yaml.ScalarNode):
        return {name: loader.construct_scalar(node)}
    if isinstance(node, yaml.SequenceNode):
        return {name: loader.construct_sequence(node, deep=True)}
    return {name: loader.construct_mapping(node, deep=True)}


_CfnLoader.add_multi_constructor("!", _tag)


@cache
def settings_of(stack: str):
    return read_stack(ROOT, stack).settings


def repository() -> str:
    (repo,) = {settings_of(s).ci.repository for s in STACKS}
    return repo


# --- Who trusts which subject ----------------------------------------------------------------
@dataclass(frozen=True)
class Reach:
    stack: str
    write: bool
    via: str  # the role or team


def _sub(value: Any, stack: str, repo: str) -> str:
    """A !Sub string of the template with its parameters filled in."""
    text = value["Fn::Sub"] if isinstance(value, dict) else value
    return text.replace("${Repository}", repo).replace("${Stack}", stack)


def aws_reach(stack: str, repo: str, preview: bool) -> dict[str, list[Reach]]:
    """Subject -> what it reaches through ci/aws-github-oidc.yaml deployed for `stack`."""
    template = yaml.load(AWS_ROLES.read_text(), Loader=_CfnLoader)
    reach: dict[str, list[Reach]] = {}
    for name, resource in template["Resources"].items():
        if resource["Type"] != "AWS::IAM::Role":
            continue
        if resource.get("Condition") == "Preview" and not preview:
            continue
        managed = json.dumps(resource["Properties"].get("ManagedPolicyArns", []))
        write = "ViewOnlyAccess" not in managed
        for statement in resource["Properties"]["AssumeRolePolicyDocument"]["Statement"]:
            subs = statement["Condition"]["StringEquals"]["token.actions.githubusercontent.com:sub"]
            for sub in subs if isinstance(subs, list) else [subs]:
                reach.setdefault(_sub(sub, stack, repo), []).append(Reach(stack, write, name))
    return reach


def pulumi_reach() -> dict[str, list[Reach]]:
    """Subject -> the stack its Pulumi team token reaches (team hyperpod-dpd-<stack>-deploy
    writes <stack>, hyperpod-dpd-<stack>-preview reads it)."""
    reach: dict[str, list[Reach]] = {}
    for policy in json.loads(PULUMI_POLICIES.read_text())["policies"]:
        team = policy["teamName"]
        m = re.fullmatch(r"hyperpod-dpd-(.+)-(deploy|preview)", team)
        assert m, f"team {team} names no stack and access"
        reach.setdefault(policy["rules"]["sub"], []).append(
            Reach(m[1], m[2] == "deploy", f"team {team}")
        )
    return reach


def every_reach() -> dict[str, list[Reach]]:
    repo, reach = repository(), pulumi_reach()
    for stack in STACKS:
        for sub, r in aws_reach(stack, repo, settings_of(stack).ci.pull_request_preview).items():
            reach.setdefault(sub, []).extend(r)
    return reach


# --- What each job can present -----------------------------------------------------------------
def triggers(workflow: dict) -> dict[str, Any]:
    on = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    if isinstance(on, str):
        return {on: None}
    if isinstance(on, list):
        return {e: None for e in on}
    return dict(on)


def _possible(expression: str, workflow: dict) -> set[str]:
    """The values `${{ ... }}` can take: its quoted literals and the dispatch input's options."""
    values = set(re.findall(r"'([^']*)'", expression)) - {"push"}
    if "inputs." in expression:
        dispatch = triggers(workflow).get("workflow_dispatch") or {}
        for spec in (dispatch.get("inputs") or {}).values():
            values.update(spec.get("options", []))
    return values


def environments(job: dict, workflow: dict) -> set[str]:
    """The environments a job can name: `${{ ... }}` in the name takes each value it can."""
    env = job.get("environment")
    if env is None:
        return set()
    name = env["name"] if isinstance(env, dict) else env
    m = re.search(r"\$\{\{.*?\}\}", name)
    if m is None:
        return {name}
    return {name[: m.start()] + v + name[m.end() :] for v in _possible(m.group(0), workflow)}


def main_only(job: dict) -> bool:
    return "github.ref == 'refs/heads/main'" in str(job.get("if", ""))


def branch_code_subjects(workflow: dict, job: dict, repo: str) -> set[str]:
    """The subjects a job presents when branch code (not main's) runs it, outside an
    environment: what a pull request, a push to another branch or a dispatch from one gives."""
    if environments(job, workflow):
        return set()  # the environment admits main only (docs/deploy.md): judged below
    subjects = set()
    for event, spec in triggers(workflow).items():
        if event in ("pull_request", "pull_request_target"):
            subjects.add(f"repo:{repo}:pull_request")
        elif event == "push":
            branches = (spec or {}).get("branches")
            if branches != ["main"]:
                subjects.add(f"repo:{repo}:ref:refs/heads/<any branch>")
        elif event == "workflow_dispatch" and not main_only(job):
            subjects.add(f"repo:{repo}:ref:refs/heads/<any branch>")
    return subjects


def secrets_in(job: dict) -> set[str]:
    return set(re.findall(r"secrets\.([A-Za-z0-9_]+)", json.dumps(job))) - {GITHUB_TOKEN}


def findings(workflow: dict, name: str, reach: dict[str, list[Reach]], repo: str) -> list[str]:
    """Why the workflow's jobs let branch code reach a stack it may not, one line each."""
    previewable = {s for s in STACKS if settings_of(s).ci.pull_request_preview}
    found = []
    if "pull_request_target" in triggers(workflow):
        found.append(f"{name}: pull_request_target runs with the base's secrets on a fork's code")
    for job_name, job in workflow["jobs"].items():
        where = f"{name}: job {job_name}"
        for secret in sorted(secrets_in(job)):
            found.append(f"{where} reads the long-lived secret {secret}")
        for subject in sorted(branch_code_subjects(workflow, job, repo)):
            for r in reach.get(subject, []):
                if r.write or r.stack not in previewable:
                    found.append(
                        f"{where} presents {subject}: {r.via} "
                        f"{'writes' if r.write else 'reads'} {r.stack}"
                    )
    return found


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


# --- The tests ---------------------------------------------------------------------------------
@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_no_branch_code_reaches_a_stack_it_may_not(path):
    assert findings(load(path), path.name, every_reach(), repository()) == []


# The pull-request workflow's preview job as it was: both stacks, a long-lived Pulumi token, the
# AWS role from a repository secret, no environment.
_FORMER_PREVIEW = {
    "on": {"pull_request": {"branches": ["main"]}},
    "jobs": {
        "preview": {
            "runs-on": "ubuntu-latest",
            "permissions": {"id-token": "write"},
            "strategy": {"matrix": {"stack": ["dev", "prod"]}},
            "steps": [
                {"uses": "aws-actions/configure-aws-credentials@x",
                 "with": {"role-to-assume": "${{ secrets.AWS_PREVIEW_ROLE_ARN }}"}},
                {"uses": "pulumi/actions@x", "with": {"command": "preview"},
                 "env": {"PULUMI_ACCESS_TOKEN": "${{ secrets.PULUMI_ACCESS_TOKEN }}"}},
            ],
        }
    },
}  # fmt: skip


def test_the_former_preview_is_caught():
    found = findings(_FORMER_PREVIEW, "pull-request.yml", every_reach(), repository())
    assert found == [
        "pull-request.yml: job preview reads the long-lived secret AWS_PREVIEW_ROLE_ARN",
        "pull-request.yml: job preview reads the long-lived secret PULUMI_ACCESS_TOKEN",
    ]


def test_a_pull_request_job_in_no_environment_with_the_prod_deploy_team_is_caught():
    """The OIDC path too: a pull request's subject that a prod team trusted would reach prod."""
    repo = repository()
    reach = every_reach()
    reach.setdefault(f"repo:{repo}:pull_request", []).append(
        Reach("prod", True, "team hyperpod-dpd-prod-deploy")
    )
    workflow = load(ROOT / ".github/workflows/pull-request.yml")
    assert findings(workflow, "pull-request.yml", reach, repo) == [
        f"pull-request.yml: job {job} presents repo:{repo}:pull_request: team "
        "hyperpod-dpd-prod-deploy writes prod"
        for job in workflow["jobs"]
    ]


def test_a_dispatch_from_any_branch_with_an_unguarded_job_is_caught():
    """workflow_dispatch takes any branch: a job outside an environment and without the main
    guard presents a branch's subject; trusted by a deploy role, it would reach that stack."""
    repo, reach = repository(), every_reach()
    branch = f"repo:{repo}:ref:refs/heads/<any branch>"
    reach[branch] = [Reach("prod", True, "a role trusting every ref")]
    workflow = {"on": {"workflow_dispatch": {}}, "jobs": {"up": {"runs-on": "x", "steps": []}}}
    assert findings(workflow, "w.yml", reach, repo) == [
        f"w.yml: job up presents {branch}: a role trusting every ref writes prod"
    ]
    workflow["jobs"]["up"]["if"] = "github.ref == 'refs/heads/main'"
    assert findings(workflow, "w.yml", reach, repo) == []


def test_every_environment_a_job_names_is_a_stacks_and_its_role_trusts_it_alone():
    """A job that names an environment presents that environment's subject: each is a stack's
    own (or its rollout's), and the deploy role and Pulumi team of that stack, no other,
    trust it."""
    repo, reach = repository(), every_reach()
    named = {
        env
        for path in WORKFLOWS
        for job in load(path)["jobs"].values()
        for env in environments(job, load(path))
    }
    assert named and named <= set(STACKS) | {f"{s}-rollout" for s in STACKS}
    for env in named:
        stack = env.removesuffix("-rollout")
        reached = reach[f"repo:{repo}:environment:{env}"]
        assert {(r.stack, r.write) for r in reached} == {(stack, True)}, env
        assert {r.via for r in reached} == {"DeployRole", f"team hyperpod-dpd-{stack}-deploy"}


def test_the_roles_trust_exact_subjects_of_this_repository():
    """StringEquals on sub and aud: no StringLike, no wildcard that a fork or another branch
    would match."""
    template = yaml.load(AWS_ROLES.read_text(), Loader=_CfnLoader)
    for name, resource in template["Resources"].items():
        if resource["Type"] != "AWS::IAM::Role":
            continue
        for statement in resource["Properties"]["AssumeRolePolicyDocument"]["Statement"]:
            assert statement["Action"] == "sts:AssumeRoleWithWebIdentity", name
            assert set(statement["Condition"]) == {"StringEquals"}, name
            equals = statement["Condition"]["StringEquals"]
            assert equals["token.actions.githubusercontent.com:aud"] == "sts.amazonaws.com"
            subs = equals["token.actions.githubusercontent.com:sub"]
            for sub in subs if isinstance(subs, list) else [subs]:
                assert "*" not in _sub(sub, "prod", "o/r"), name


def test_the_preview_role_reads_no_data():
    """ViewOnlyAccess (lists and describes: no object, secret or log reads) and the one
    cluster's describe."""
    preview = yaml.load(AWS_ROLES.read_text(), Loader=_CfnLoader)["Resources"]["PreviewRole"]
    props = preview["Properties"]
    assert [_sub(a, "dev", "o/r") for a in props["ManagedPolicyArns"]] == [
        "arn:${AWS::Partition}:iam::aws:policy/job-function/ViewOnlyAccess"
    ]
    (inline,) = props["Policies"]
    (statement,) = inline["PolicyDocument"]["Statement"]
    assert statement["Action"] == "eks:DescribeCluster"


def test_only_stacks_that_allow_it_are_previewed_by_pull_requests_and_never_prod():
    assert settings_of("prod").ci.pull_request_preview is False
    runs = json.dumps(load(ROOT / ".github/workflows/pull-request.yml")["jobs"])
    previewed = set(re.findall(r"ci --stack (\S+) --job preview", runs))
    assert previewed == {s for s in STACKS if settings_of(s).ci.pull_request_preview} == {"dev"}


def test_each_job_asks_for_a_team_that_trusts_its_subject():
    repo = repository()
    teams: dict[str, set[str]] = {}
    for policy in json.loads(PULUMI_POLICIES.read_text())["policies"]:
        assert (
            policy["rules"]["aud"] == f"urn:pulumi:org:{settings_of('dev').ci.pulumi_organization}"
        )
        teams.setdefault(policy["teamName"], set()).add(policy["rules"]["sub"])
    asked = 0
    for path in WORKFLOWS:
        workflow = load(path)
        for job in workflow["jobs"].values():
            for step in job.get("steps", []):
                if not str(step.get("uses", "")).startswith("pulumi/auth-actions@"):
                    continue
                scope = step["with"]["scope"].removeprefix("team:")
                stacks = _possible(str(job.get("env", {}).get("STACK", "")), workflow)
                names = {scope.replace("${{ env.STACK }}", s) for s in stacks} or {scope}
                envs = environments(job, workflow)
                subject = (
                    {f"repo:{repo}:environment:{e}" for e in envs}
                    if envs
                    else {f"repo:{repo}:pull_request"}
                )
                for name in names:
                    asked += 1
                    assert teams[name] & subject, (path.name, name)
    assert asked == 7  # the preview (dev), the deploy and the rollout (dev, prod, canary)


def test_the_roles_template_is_valid_cloudformation():
    """cfn-lint's errors and warnings (its informational hints are advice, not findings), as
    `cfn-lint ci/aws-github-oidc.yaml` prints them."""
    from cfnlint.api import lint_all

    found = [m for m in lint_all(AWS_ROLES.read_text()) if m.rule.id[0] in "EW"]
    assert [str(m) for m in found] == []
