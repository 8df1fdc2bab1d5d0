"""The running program's configuration: read once from the Pulumi runtime, validated, frozen.

The only place the program touches `pulumi.Config`: everything downstream receives the typed
settings (settings/) and the secrets as Pulumi secret Outputs.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws
from pulumi.runtime import config as runtime_config

from core.vocabulary import PROJECT
from settings import ConfigError, ConfigProblem, StackSettings
from settings.config.errors import for_stack
from settings.parse import parse_settings
from settings.stack_name import check_stack_name


class StackConfigError(ConfigError, pulumi.RunError):
    """A ConfigError that `pulumi up` prints as a message, without a traceback."""


@dataclass(frozen=True)
class StackConfig:
    """What components receive: validated settings plus the secrets as Pulumi secret Outputs."""

    settings: StackSettings
    hf_token: pulumi.Output[str] | None
    project: str
    stack: str


# The settings of a stack already read and validated by the command that runs the program (the
# offline plan reads the stack file once, then runs the program with its config): set inside
# that run's own context, so the program does not decode and validate the same values again.
HANDED_SETTINGS: ContextVar[StackSettings | None] = ContextVar("handed_settings", default=None)


def load_stack_config() -> StackConfig:
    """Read and validate all config of the running Pulumi program (real engine or mocks), or
    take the settings the command running it has read from the same config (HANDED_SETTINGS)."""
    keys = set(runtime_config.CONFIG.get()) | set(runtime_config.get_config_env())
    # The stack names the clusters: a name EKS or HyperPod refuses stops here, before anything.
    named = check_stack_name(pulumi.get_project(), pulumi.get_stack())
    settings = HANDED_SETTINGS.get()
    if settings is None:
        try:
            raw = {k: runtime_config.get_config(k) for k in sorted(keys)}
            secret = {k for k in keys if runtime_config.is_config_secret(k)}
            settings = parse_settings(raw, secret)
        except ConfigError as exc:
            problems = for_stack([*named, *exc.problems], pulumi.get_stack())
            raise StackConfigError(problems, exc.source) from None
    if named:
        raise StackConfigError(named, "stack selection")
    has_token = runtime_config.get_config(f"{PROJECT}:hfToken")
    hf_token = pulumi.Config(PROJECT).get_secret("hfToken") if has_token else None
    return StackConfig(settings, hf_token, pulumi.get_project(), pulumi.get_stack())


def deploying_principal(s: StackSettings) -> str:
    """The IAM role (or user) that deploys the stack: hyperpod-dpd:ci.deployRoleArn when the
    stack names its deploy role (the same whoever runs the program: a pull request's read-only
    preview plans no change of what names it), else the issuer of the session running
    `pulumi up`, so an assumed role's ARN with its path, as terraform-aws-eks does
    (aws_iam_session_context). It is what IAM evaluates as aws:PrincipalArn for that role's
    sessions: the lifecycle bucket's policy lets it write the boot scripts (specs/buckets.py
    only_writers), and with eks.deployerAdmin it gets the cluster-admin entry.

    The session is asked of AWS before anything is registered (both are read-only invokes; the
    session context is parsed from the ARN by the provider)."""
    if s.ci.deploy_role_arn is not None:
        return s.ci.deploy_role_arn
    caller = aws.get_caller_identity()
    return aws.iam.get_session_context(arn=caller.arn).issuer_arn


def deployer_arn(s: StackSettings, principal: str) -> str | None:
    """The principal that deploys the stack (`deploying_principal()`), when eks.deployerAdmin
    makes it a cluster admin; None when eks.deployerAdmin is false.

    A deployer that is also listed in eks.adminRoleArns or the view roles would need a second
    access entry for one principal, which EKS refuses, so the program stops here with the key,
    not halfway through `pulumi up`. (A named deploy role is checked with the settings:
    settings/ci.py.)
    """
    if not s.eks.deployer_admin:
        return None
    arn = principal
    if s.ci.deploy_role_arn is None and arn in {*s.eks.admin_role_arns, *s.view_role_arns()}:
        problem = ConfigProblem(
            key=f"{PROJECT}:eks.deployerAdmin",
            value=True,
            allowed=f"false while the role running `pulumi up` ({arn}) is in eks.adminRoleArns "
            "or eks.viewRoleArns (EKS allows one access entry per role)",
            fix=f"set {PROJECT}:eks.deployerAdmin false (the listed entry gives that role its "
            "access), or remove it from the list, or name the deploy role in "
            f"{PROJECT}:ci.deployRoleArn",
        )
        raise StackConfigError([problem])
    return arn
