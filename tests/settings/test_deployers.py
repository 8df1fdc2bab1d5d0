"""hyperpod-dpd:deployerArns: the IAM roles (or users) besides the identity running `pulumi up`
that may write the nodes' boot scripts. IAM matches them as aws:PrincipalArn, the role's ARN,
so anything else would match no request: refused, naming the key, with the fix."""

from __future__ import annotations

import pytest

from settings import parse_settings
from tests.conftest import edit, stack_raw
from tests.settings.problems import followed, only_problem, problems_of

KEY = "hyperpod-dpd:deployerArns"
CI = "arn:aws:iam::111122223333:role/GitHubPulumiDeploy"


def test_the_shipped_stacks_name_the_admins_besides_their_deploy_role():
    for stack, account in (("dev", "111122223333"), ("prod", "444455556666"),
                           ("canary", "111122223333")):  # fmt: skip
        s = parse_settings(stack_raw(stack))
        assert s.deployer_arns == [f"arn:aws:iam::{account}:role/PlatformAdmin"], stack
        assert s.ci.deploy_role_arn, stack  # the policy names it too (specs/desired.py)


def test_roles_with_a_path_and_users_are_taken():
    arns = [
        "arn:aws:iam::111122223333:role/aws-reserved/sso.amazonaws.com/AWSReservedSSO_Admin_0a1b",
        "arn:aws:iam::111122223333:user/release-bot",
    ]
    assert parse_settings(edit(stack_raw("dev"), KEY, arns)).deployer_arns == arns


def test_an_assumed_role_session_is_refused_and_the_fix_names_its_role():
    """What `aws sts get-caller-identity` prints: never an aws:PrincipalArn value."""
    session = "arn:aws:sts::111122223333:assumed-role/GitHubPulumiDeploy/GitHubActions"
    raw = edit(stack_raw("dev"), KEY, [session])
    message = only_problem(raw)
    assert message.startswith(f"{KEY}[0]: got '{session}'")
    assert "not an assumed-role session ARN" in message
    assert parse_settings(followed(raw, message)).deployer_arns == [CI]


@pytest.mark.parametrize(
    "arn",
    [
        "arn:aws:iam::111122223333:role/*",  # a wildcard: aws:PrincipalArn compares exactly here
        "arn:aws:iam::111122223333:group/Admins",  # a group is never a request's principal
        "arn:aws:s3:::sagemaker-bucket",
        "GitHubPulumiDeploy",
    ],
)
def test_what_is_not_a_role_or_user_arn_is_refused_naming_the_key(arn):
    message = only_problem(edit(stack_raw("dev"), KEY, [arn]))
    assert message.startswith(f"{KEY}[0]: got '{arn}'")
    assert "an IAM role or user ARN" in message


def test_another_partition_and_a_repeated_entry_are_refused():
    gov = "arn:aws-us-gov:iam::111122223333:role/GitHubPulumiDeploy"
    problems = problems_of(edit(stack_raw("dev"), KEY, [gov, CI, CI]))
    assert any(
        p.startswith(f"{KEY}: got '{gov}'") and "roles of partition aws" in p for p in problems
    )
    (repeated,) = [p for p in problems if "each principal once" in p]
    assert repeated.startswith(f'{KEY}: got ["{CI}"]; allowed: each principal once.')
    raw = edit(stack_raw("dev"), KEY, [CI, CI])
    assert parse_settings(followed(raw, only_problem(raw))).deployer_arns == [CI]
