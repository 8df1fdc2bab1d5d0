"""No job that runs branch code holds a credential that can read or write prod.

The workflows hold no long-lived secret but the rollout app's key, an environment secret (below):
each job's credentials are what its GitHub OIDC token is trusted for. Who trusts which token is
code in this repository: the AWS roles (ci/aws-github-oidc.yaml, deployed per stack with the
parameters its stack file implies) and the Pulumi Cloud team policies
(ci/pulumi-oidc-policies.json). A token's `sub` follows the repository's subject template,
repo + context + job_workflow_ref (docs/deploy.md, "CI credentials"; GitHub docs, "OpenID
Connect reference": the context is `environment:<name>` in a job that names an environment,
else `pull_request` or `ref:<ref>`; job_workflow_ref is `<repo>/.github/workflows/<file>@<ref>`).

So "can branch code reach prod?" is answered from the files alone. A branch can push any
workflow file naming any environment (GitHub creates a missing environment without protection
rules), open a pull request, or dispatch main's workflows from its ref: every token it can get
this way (the attacker's tokens below, drawn over every file, environment and event) reaches no
stack but those whose stack file lets pull requests preview them, and those read-only. And
main's own jobs get exactly what they need.
"""

from __future__ import annotations

import copy
import itertools
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from settings.stack_file import read_stack
from tests.conftest import ROOT
from tests.support.program_runs import this_environment
from tests.support.tool_cache import kept, key

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
STACKS = sorted(
    p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in ROOT.glob("Pulumi.*.yaml")
)
AWS_ROLES = ROOT / "ci" / "aws-github-oidc.yaml"
PULUMI_POLICIES = ROOT / "ci" / "pulumi-oidc-policies.json"
GITHUB_TOKEN = "GITHUB_TOKEN"  # the job's own repository token: scoped by `permissions`
# The one long-lived secret: the rollout app's, which pushes a step's commit to main. An
# environment secret of <stack>-rollout, which admits main's code only (its deployment branches:
# an environment that exists keeps its rules for a branch's workflow too).
ROLLOUT_SECRETS = frozenset({"ROLLOUT_APP_CLIENT_ID", "ROLLOUT_APP_PRIVATE_KEY"})
MAIN = "refs/heads/main"
SUB = "token.actions.githubusercontent.com:sub"


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


@cache
def _parsed_roles_template() -> dict[str, Any]:
    return yaml.load(AWS_ROLES.read_text(), Loader=_CfnLoader)


def roles_template() -> dict[str, Any]:
    """ci/aws-github-oidc.yaml, parsed once (the audit asks for its roles once per token, over a
    thousand times), each caller getting its own copy."""
    return copy.deepcopy(_parsed_roles_template())


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


# --- Tokens ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Token:
    """The claims of a job's GitHub OIDC token that the trusts read."""

    repo: str
    context: str  # environment:<name> | pull_request | ref:<ref>
    file: str  # the workflow file
    ref: str  # the ref its workflow ran at
    event: str
    workflow: str  # the workflow's name
    extra: Mapping[str, str] = field(default_factory=dict)

    @property
    def job_workflow_ref(self) -> str:
        return f"{self.repo}/.github/workflows/{self.file}@{self.ref}"

    @property
    def sub(self) -> str:
        return f"repo:{self.repo}:{self.context}:job_workflow_ref:{self.job_workflow_ref}"

    def claims(self) -> dict[str, str]:
        return {
            "sub": self.sub,
            "repository": self.repo,
            "event_name": self.event,
            "workflow": self.workflow,
            "job_workflow_ref": self.job_workflow_ref,
            "ref": self.ref,
            **self.extra,
        }


# --- Who trusts which token ----------------------------------------------------------------------
@dataclass(frozen=True)
class Reach:
    stack: str
    write: bool
    via: str  # the role or team


def _resolve(value: Any, params: Mapping[str, str], conditions: Mapping[str, bool]) -> Any:
    """A template value with !Sub filled in and !If decided."""
    if isinstance(value, dict) and "Fn::Sub" in value:
        return re.sub(r"\$\{([A-Za-z:]+)\}", lambda m: params.get(m[1], m[0]), value["Fn::Sub"])
    if isinstance(value, dict) and "Fn::If" in value:
        name, yes, no = value["Fn::If"]
        return _resolve(yes if conditions[name] else no, params, conditions)
    if isinstance(value, list):
        return [_resolve(v, params, conditions) for v in value]
    if isinstance(value, dict):
        return {k: _resolve(v, params, conditions) for k, v in value.items()}
    return value


def stack_parameters(stack: str, repo: str) -> dict[str, str]:
    """The template's parameters for a stack, as docs/deploy.md says to set them: rollout for a
    stack with a traffic split, the preview where its stack file allows it."""
    s = settings_of(stack)
    return {
        "Repository": repo,
        "Stack": stack,
        "Rollout": str(bool(s.traffic)).lower(),
        "PullRequestPreview": str(s.ci.pull_request_preview).lower(),
    }


def _iam_like(pattern: str, text: str) -> bool:
    """IAM's StringLike: * any run of characters, ? one (no character classes)."""
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, text) is not None


def aws_trusts(stack: str, repo: str) -> Iterator[tuple[str, Reach, Any]]:
    """(role, reach, a predicate on a token) for each role of the template deployed for
    `stack`."""
    template = roles_template()
    params = stack_parameters(stack, repo)
    conditions = {
        "Preview": params["PullRequestPreview"] == "true",
        "RolledOut": params["Rollout"] == "true",
        "CreateProvider": True,
    }
    for name, resource in template["Resources"].items():
        if resource["Type"] != "AWS::IAM::Role":
            continue
        if not conditions.get(resource.get("Condition", ""), True):
            continue
        props = _resolve(resource["Properties"], params, conditions)
        write = "ViewOnlyAccess" not in json.dumps(props.get("ManagedPolicyArns", []))
        for statement in props["AssumeRolePolicyDocument"]["Statement"]:
            condition = statement["Condition"]
            exact = condition.get("StringEquals", {}).get(SUB)
            like = condition.get("StringLike", {}).get(SUB)
            exact = [] if exact is None else exact if isinstance(exact, list) else [exact]
            like = [] if like is None else like if isinstance(like, list) else [like]

            def trusted(token: Token, exact=tuple(exact), like=tuple(like)) -> bool:
                return token.sub in exact or any(_iam_like(p, token.sub) for p in like)

            yield name, Reach(stack, write, name), trusted


def pulumi_trusts() -> Iterator[tuple[Reach, Any]]:
    """(reach, a predicate on a token) for each policy: every claim its rules name, equal."""
    for policy in json.loads(PULUMI_POLICIES.read_text())["policies"]:
        team = policy["teamName"]
        m = re.fullmatch(r"hyperpod-dpd-(.+)-(deploy|preview)", team)
        assert m, f"team {team} names no stack and access"
        rules = {k: v for k, v in policy["rules"].items() if k != "aud"}

        def trusted(token: Token, rules=rules) -> bool:
            claims = token.claims()
            return all(claims.get(k) == v for k, v in rules.items())

        yield Reach(m[1], m[2] == "deploy", f"team {team}"), trusted


def reach_of(token: Token) -> list[Reach]:
    found = [r for r, trusted in pulumi_trusts() if trusted(token)]
    for stack in STACKS:
        found += [r for _, r, trusted in aws_trusts(stack, token.repo) if trusted(token)]
    return found


# --- What branch code can get --------------------------------------------------------------------
def environment_names() -> set[str]:
    """Every environment a token could name: each stack's, each rollout's, and one no workflow
    names (a branch's workflow creates it)."""
    return {*STACKS, *(f"{s}-rollout" for s in STACKS), "branch-made"}


def attacker_tokens(repo: str) -> Iterator[Token]:
    """Every token branch code can get: its own workflow file, or one of main's run at its ref
    (a push, a dispatch from the branch, a pull request), naming any environment or none."""
    files = {p.name for p in WORKFLOWS} | {"evil.yml"}
    names = {load(p).get("name", p.stem) for p in WORKFLOWS} | {"evil"}
    branch, pull = "refs/heads/attacker", "refs/pull/7/merge"
    runs = [("push", branch, f"ref:{branch}"), ("workflow_dispatch", branch, f"ref:{branch}")]
    runs += [("pull_request", pull, "pull_request")]
    for (event, ref, plain), file, name in itertools.product(runs, sorted(files), sorted(names)):
        extra = {"base_ref": "main"} if event == "pull_request" else {}
        for context in [plain, *(f"environment:{e}" for e in sorted(environment_names()))]:
            yield Token(repo, context, file, ref, event, name, extra)


def reaches_beyond_preview(token: Token) -> list[Reach]:
    previewable = {s for s in STACKS if settings_of(s).ci.pull_request_preview}
    return [r for r in reach_of(token) if r.write or r.stack not in previewable]


# --- What main's jobs present --------------------------------------------------------------------
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


def _expand(text: str, workflow: dict) -> set[str]:
    m = re.search(r"\$\{\{.*?\}\}", text)
    if m is None:
        return {text}
    return {text[: m.start()] + v + text[m.end() :] for v in _possible(m.group(0), workflow)}


def environments(job: dict, workflow: dict) -> set[str]:
    """The environments a job can name: `${{ ... }}` in the name takes each value it can."""
    env = job.get("environment")
    if env is None:
        return set()
    return _expand(env["name"] if isinstance(env, dict) else env, workflow)


def main_tokens(path: Path, job: dict, repo: str) -> list[Token]:
    """The tokens a job of main's workflow presents when main's code runs it."""
    workflow = load(path)
    name = workflow.get("name", path.stem)
    envs = sorted(environments(job, workflow))
    tokens = []
    for event in triggers(workflow):
        if event == "pull_request":
            ref, plain, extra = "refs/pull/7/merge", "pull_request", {"base_ref": "main"}
        else:
            ref, plain, extra = MAIN, f"ref:{MAIN}", {}
        contexts = [f"environment:{e}" for e in envs] or [plain]
        tokens += [Token(repo, c, path.name, ref, event, name, extra) for c in contexts]
    return tokens


def credential_steps(job: dict) -> list[str]:
    uses = [str(s.get("uses", "")).split("@")[0] for s in job.get("steps", [])]
    return [
        u for u in uses if u in ("aws-actions/configure-aws-credentials", "pulumi/auth-actions")
    ]


def secrets_in(job: dict) -> set[str]:
    return set(re.findall(r"secrets\.([A-Za-z0-9_]+)", json.dumps(job))) - {GITHUB_TOKEN}


def secret_findings(workflow: dict, name: str) -> list[str]:
    """Long-lived secrets outside the rollout app's protected environment, one line each."""
    found = []
    if "pull_request_target" in triggers(workflow):
        found.append(f"{name}: pull_request_target runs with the base's secrets on a fork's code")
    for job_name, job in workflow["jobs"].items():
        rollout_only = environments(job, workflow) and all(
            e.endswith("-rollout") for e in environments(job, workflow)
        )
        guarded = "github.ref == 'refs/heads/main'" in str(job.get("if", ""))
        for secret in sorted(secrets_in(job)):
            if secret in ROLLOUT_SECRETS and rollout_only and guarded:
                continue
            found.append(f"{name}: job {job_name} reads the long-lived secret {secret}")
    return found


# --- The tests ---------------------------------------------------------------------------------
def test_no_token_branch_code_can_get_reaches_a_stack_but_the_previewed_one_read_only():
    repo = repository()
    tokens = list(attacker_tokens(repo))
    assert len(tokens) > 300  # every file, environment and event
    found = {t.sub: reaches_beyond_preview(t) for t in tokens}
    assert {sub: r for sub, r in found.items() if r} == {}
    # ... while the pull request's own preview does reach dev, read-only.
    preview = [t for t in tokens if t.context == "pull_request" and t.workflow == "pull-request"]
    assert {(r.stack, r.write) for t in preview for r in reach_of(t)} == {("dev", False)}


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_main_s_jobs_get_exactly_the_credentials_they_ask_for(path):
    """Each job that assumes a role or asks Pulumi for a token is trusted, by main's code, for
    its stack's deploy (or dev's preview); a job that asks for none could get no more than a
    pull request's preview (the trusts name a workflow file, not its jobs)."""
    repo, workflow = repository(), load(path)
    for job_name, job in workflow["jobs"].items():
        for token in main_tokens(path, job, repo):
            reached = {(r.stack, r.write, r.via.split()[0]) for r in reach_of(token)}
            if not credential_steps(job):
                assert reaches_beyond_preview(token) == [], (path.name, job_name, token.sub)
                continue
            if token.context == "pull_request":
                want = {("dev", False, "PreviewRole"), ("dev", False, "team")}
            else:
                stack = token.context.removeprefix("environment:").removesuffix("-rollout")
                want = {(stack, True, "DeployRole"), (stack, True, "team")}
            assert reached == want, (path.name, job_name, token.sub)


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_no_workflow_holds_a_long_lived_secret_outside_the_rollout_environment(path):
    assert secret_findings(load(path), path.name) == []


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
    assert secret_findings(_FORMER_PREVIEW, "pull-request.yml") == [
        "pull-request.yml: job preview reads the long-lived secret AWS_PREVIEW_ROLE_ARN",
        "pull-request.yml: job preview reads the long-lived secret PULUMI_ACCESS_TOKEN",
    ]


def test_the_rollout_secret_outside_its_environment_or_main_is_caught():
    job = {"environment": "canary-rollout", "if": "github.ref == 'refs/heads/main'",
           "steps": [{"with": {"private-key": "${{ secrets.ROLLOUT_APP_PRIVATE_KEY }}"}}]}  # fmt: skip
    workflow = {"on": {"workflow_dispatch": {}}, "jobs": {"step": job}}
    assert secret_findings(workflow, "w.yml") == []
    for change in ({"environment": "canary"}, {"if": "always()"}):
        assert secret_findings({**workflow, "jobs": {"step": {**job, **change}}}, "w.yml") == [
            "w.yml: job step reads the long-lived secret ROLLOUT_APP_PRIVATE_KEY"
        ]


def test_a_trust_in_the_environment_alone_is_caught():
    """The subject before job_workflow_ref: GitHub creates an environment a branch's workflow
    names, so a trust in `environment:prod-rollout` alone hands prod to a branch push."""
    repo = repository()
    token = Token(repo, "environment:prod-rollout", "evil.yml", "refs/heads/attacker", "push", "e")
    legacy = f"repo:{repo}:environment:prod-rollout"
    assert _iam_like(f"{legacy}*", token.sub)  # what a trust without the workflow would let in
    assert not reaches_beyond_preview(token)


def test_the_roles_trust_main_s_workflow_files_and_the_preview_only_pull_requests():
    """StringEquals on main's deploy and rollout files; the one StringLike is the preview's,
    whose wildcard spans the pull request's number only."""
    repo = repository()
    for stack in STACKS:
        for role, reach, _ in aws_trusts(stack, repo):
            template = roles_template()
            params = stack_parameters(stack, repo)
            conditions = {"Preview": True, "RolledOut": params["Rollout"] == "true",
                          "CreateProvider": True}  # fmt: skip
            props = _resolve(template["Resources"][role]["Properties"], params, conditions)
            (statement,) = props["AssumeRolePolicyDocument"]["Statement"]
            equals = statement["Condition"]["StringEquals"]
            assert equals["token.actions.githubusercontent.com:aud"] == "sts.amazonaws.com"
            if reach.write:
                subs = equals[SUB]
                assert all(s.endswith(f"@{MAIN}") and "*" not in s for s in subs), role
            else:
                assert statement["Condition"]["StringLike"][SUB] == (
                    f"repo:{repo}:pull_request:job_workflow_ref:{repo}/.github/workflows/"
                    "pull-request.yml@refs/pull/*/merge"
                )


def test_the_preview_role_reads_no_data():
    """ViewOnlyAccess (lists and describes: no object, secret or log reads) and the one
    cluster's describe."""
    preview = roles_template()["Resources"]["PreviewRole"]
    props = _resolve(preview["Properties"], {"Stack": "dev"}, {"CreateProvider": True})
    assert props["ManagedPolicyArns"] == [
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


def test_each_job_asks_for_a_team_that_trusts_it():
    repo, asked = repository(), set()
    teams: dict[str, list] = {}
    for r, trusted in pulumi_trusts():
        teams.setdefault(r.via.removeprefix("team "), []).append(trusted)
    for path in WORKFLOWS:
        workflow = load(path)
        for job in workflow["jobs"].values():
            for step in job.get("steps", []):
                if not str(step.get("uses", "")).startswith("pulumi/auth-actions@"):
                    continue
                for token in main_tokens(path, job, repo):
                    stack = token.context.removeprefix("environment:").removesuffix("-rollout")
                    scope = step["with"]["scope"].removeprefix("team:")
                    team = scope.replace("${{ env.STACK }}", stack)
                    asked.add((path.name, team, token.context))
                    assert any(t(token) for t in teams.get(team, [])), (path.name, team)
    # The preview (dev), the deploy (dev, prod, canary), the rollout (canary).
    assert len(asked) == 5, sorted(asked)


def test_the_roles_template_is_valid_cloudformation():
    """cfn-lint's errors and warnings (its informational hints are advice, not findings), as
    `cfn-lint ci/aws-github-oidc.yaml` prints them, in every Region. A template cfn-lint
    passed before, in this very environment, is not linted again (tests/support/tool_cache.py): over
    every Region it costs cfn-lint seconds of CPU."""
    text = AWS_ROLES.read_text()
    found = kept("cfn-lint-all-regions", key(this_environment(), text), lambda: _lint_all(text),
                 keep=lambda found: found == [])  # fmt: skip
    assert found == []


def _lint_all(text: str) -> list[str]:
    from cfnlint.api import lint_all

    return [str(m) for m in lint_all(text) if m.rule.id[0] in "EW"]
