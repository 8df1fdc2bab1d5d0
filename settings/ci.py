"""How the stack's GitHub workflows reach it: the runner its deploys run on, and whether pull
requests may preview it.

A stack whose EKS API is private (eks.publicAccessCidrs empty, prod's choice) cannot be deployed
from a GitHub-hosted runner: the Kubernetes half of `pulumi up` (the operator's charts, the
endpoints) talks to the API server, which only answers inside the VPC. The answer is a runner
there, never a public endpoint (hyperpod-dpd-eks-endpoint is locked mandatory):

- `codebuild`: the stack creates an AWS CodeBuild project in its private subnets that GitHub
  Actions uses as a runner (CodeBuild user guide, "Self-hosted GitHub Actions runners in AWS
  CodeBuild", https://docs.aws.amazon.com/codebuild/latest/userguide/action-runner-overview.html),
  reaching the API server through the cluster security group on 443 and nothing else inward;
- `self-hosted`: a runner of your own in the VPC, named by its labels;
- `github-hosted` (the default): ubuntu-latest, for stacks whose API is public to CIDRs that
  include your runners.

The stack file also names the identities its workflows use, so the workflows hold no account
fact and no secret (`hyperpod-dpd ci --stack S` hands them to a job): the deploy role
(deployRoleArn) and the pull requests' read-only preview role (previewRoleArn), both from
ci/aws-github-oidc.yaml, and the Pulumi Cloud organization whose OIDC policies
(ci/pulumi-oidc-policies.json) turn the job's GitHub token into a short-lived Pulumi token.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from core.problems import MISSING, ConfigProblem
from settings.cluster.groups import EksConfig
from settings.config.errors import full_key, set_fix
from settings.config.fields import (
    CONNECTION_ARN_PATTERN,
    GITHUB_REPOSITORY_PATTERN,
    PULUMI_ORGANIZATION_PATTERN,
    RUNNER_LABEL_PATTERN,
    RoleArn,
    SettingsModel,
    matching,
)

Runner = Literal["github-hosted", "codebuild", "self-hosted"]
# CodeBuild's Linux container sizes (CodeBuild user guide, "Build environment compute modes and
# types"): small 3 GB / 2 vCPU, medium 7 GB / 4 vCPU, large 15 GB / 8 vCPU. A deploy runs the
# program, its providers and the policy pack at once: medium by default.
ComputeType = Literal["BUILD_GENERAL1_SMALL", "BUILD_GENERAL1_MEDIUM", "BUILD_GENERAL1_LARGE"]


class CiConfig(SettingsModel):
    runner: Runner = Field(
        "github-hosted",
        description="Where the stack's deploy jobs run: github-hosted (ubuntu-latest; its API "
        "must be public to CIDRs that include the runners), codebuild (an AWS CodeBuild runner "
        "the stack creates in its private subnets: needs repository and connectionArn) or "
        "self-hosted (a runner of yours in the VPC: needs labels). A private API needs one "
        "of the last two.",
    )
    repository: Annotated[str, matching(GITHUB_REPOSITORY_PATTERN)] | None = Field(
        None,
        description="The GitHub repository OWNER/NAME whose workflow jobs the codebuild runner "
        "takes.",
        examples=["my-org/hyperpod-dpd"],
    )
    connection_arn: Annotated[str, matching(CONNECTION_ARN_PATTERN)] | None = Field(
        None,
        description="The AWS CodeConnections connection to GitHub the codebuild runner uses "
        "(created once in the console: Developer Tools > Settings > Connections).",
    )
    labels: list[Annotated[str, matching(RUNNER_LABEL_PATTERN)]] = Field(
        default_factory=list,
        description="The labels of a self-hosted runner inside the VPC (runs-on takes "
        "[self-hosted, ...labels]).",
    )
    compute_type: ComputeType = Field(
        "BUILD_GENERAL1_MEDIUM",
        description="The codebuild runner's size (BUILD_GENERAL1_SMALL, _MEDIUM or _LARGE).",
    )
    deploy_role_arn: RoleArn | None = Field(
        None,
        description="The role the deploy workflow assumes with the job's GitHub OIDC token "
        "(ci/aws-github-oidc.yaml's DeployRole, hyperpod-dpd-<stack>-deploy); with "
        "eks.deployerAdmin it is the cluster admin entry of whoever deploys.",
        examples=["arn:aws:iam::111122223333:role/hyperpod-dpd-dev-deploy"],
    )
    pulumi_organization: Annotated[str, matching(PULUMI_ORGANIZATION_PATTERN)] | None = Field(
        None,
        description="The Pulumi Cloud organization whose OIDC policies give the workflows a "
        "short-lived team token (ci/pulumi-oidc-policies.json).",
        examples=["my-org"],
    )
    pull_request_preview: bool = Field(
        False,
        description="Pull requests run `pulumi preview` of this stack with a read-only role "
        "trusted by pull requests only (previewRoleArn; .github/workflows/pull-request.yml). "
        "Only for a stack whose secrets branch code may read (dev): never prod.",
    )
    preview_role_arn: RoleArn | None = Field(
        None,
        description="With pullRequestPreview: the read-only role pull requests assume "
        "(ci/aws-github-oidc.yaml's PreviewRole, hyperpod-dpd-<stack>-preview); it gets a "
        "read-only cluster entry as eks.viewRoleArns do.",
    )


def check_ci(ci: CiConfig, eks: EksConfig) -> list[ConfigProblem]:
    """The keys each runner needs, and none it ignores (a connectionArn without runner
    codebuild is a runner the user expects and would not get); the preview role with the
    preview, and let into the cluster read-only; the deploy role given one access entry."""
    problems = [*_check_preview(ci, eks), *_check_deployer(ci, eks)]
    needs = {"codebuild": ("repository", "connectionArn"), "self-hosted": ("labels",)}
    given = {
        "repository": ci.repository,
        "connectionArn": ci.connection_arn,
        "labels": ci.labels or None,
    }
    runner_key = full_key(("ci", "runner"))
    for name, value in given.items():
        key = full_key(("ci", name))
        wanted = name in needs.get(ci.runner, ())
        if wanted and value is None:
            example = ["gpu-vpc"] if name == "labels" else None
            problems.append(
                ConfigProblem(
                    key,
                    value if name != "labels" else [],
                    f"set while {runner_key} is {ci.runner}",
                    set_fix(key, example)
                    if example
                    else f"set {key} (see docs/deploy.md, 'A runner that reaches the private API')",
                )
            )
        elif not wanted and value is not None:
            owner = next(r for r, keys in needs.items() if name in keys)
            problems.append(
                ConfigProblem(
                    key,
                    value,
                    f"only with {runner_key} {owner} (it is {ci.runner})",
                    f"{set_fix(runner_key, owner)}, or remove {key}",
                )
            )
    return problems


def _check_deployer(ci: CiConfig, eks: EksConfig) -> list[ConfigProblem]:
    """With eks.deployerAdmin the deploy role gets its own cluster-admin entry (program/
    stack_config.py deployer_arn): one listed in adminRoleArns or viewRoleArns too would be a
    second entry for one principal, which EKS refuses."""
    arn = ci.deploy_role_arn
    if not eks.deployer_admin or arn is None:
        return []
    listed = [f for f, arns in (("adminRoleArns", eks.admin_role_arns),
                                ("viewRoleArns", eks.view_role_arns)) if arn in arns]  # fmt: skip
    if not listed:
        return []
    key = full_key(("eks", "deployerAdmin"))
    return [
        ConfigProblem(
            key,
            True,
            f"false while {full_key(('ci', 'deployRoleArn'))} ({arn}) is in "
            f"eks.{listed[0]} (EKS allows one access entry per role)",
            f"{set_fix(key, False)}, or remove it from eks.{listed[0]}",
        )
    ]


def _check_preview(ci: CiConfig, eks: EksConfig) -> list[ConfigProblem]:
    """The preview role with the preview (and only then); it gets a read-only cluster entry of
    its own (StackSettings.view_role_arns), so it may not be a cluster admin too (EKS allows
    one access entry per role)."""
    preview, role = full_key(("ci", "pullRequestPreview")), full_key(("ci", "previewRoleArn"))
    if ci.pull_request_preview and ci.preview_role_arn is None:
        return [
            ConfigProblem(
                role,
                MISSING,
                f"the read-only role pull requests assume while {preview} is true",
                f"{set_fix(role)} (ci/aws-github-oidc.yaml's PreviewRoleArn output)",
            )
        ]
    if not ci.pull_request_preview and ci.preview_role_arn is not None:
        return [
            ConfigProblem(
                role,
                ci.preview_role_arn,
                f"only with {preview} true",
                f"{set_fix(preview, True)}, or remove {role}",
            )
        ]
    if ci.preview_role_arn is not None and ci.preview_role_arn in eks.admin_role_arns:
        return [
            ConfigProblem(
                role,
                ci.preview_role_arn,
                "a role that is no cluster admin (eks.adminRoleArns lists it): a pull "
                "request's preview reads, it never administers",
                f"name the read-only role of ci/aws-github-oidc.yaml in {role}",
            )
        ]
    return []
