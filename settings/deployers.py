"""Who deploys the stack (`hyperpod-dpd:deployerArns`): with the identity running `pulumi up`,
the only principals that may write or delete the HyperPod nodes' boot scripts (the lifecycle
bucket's policy, specs/lifecycle.py), and the checks of that list against the Region.

A principal is named by its IAM role (or user) ARN, which is what IAM puts in aws:PrincipalArn
for every request of one of its sessions ("aws:PrincipalArn", AWS global condition context keys,
https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-keys.html#condition-keys-principalarn):
an assumed-role session ARN would match nothing, so the field's pattern refuses it and the fix
names the role.
"""

from __future__ import annotations

from core.problems import ConfigProblem
from core.regions import partition_of
from settings.config.errors import full_key

KEY = ("deployerArns",)
# IAM: role and user names are at most 64 characters (the botocore IAM model's roleNameType and
# userNameType; core/aws/aws_facts.py ROLE_NAME_MAX).
NAME_MAX = 64


def check_deployers(arns: list[str], region: str) -> list[ConfigProblem]:
    """Each ARN of the stack's partition, with a name IAM accepts, listed once."""
    key, partition, problems = full_key(KEY), partition_of(region), []
    for arn in arns:
        name = arn.rsplit("/", 1)[-1]
        if arn.split(":")[1] != partition:
            problems.append(ConfigProblem(
                key, arn, f"principals of partition {partition} (the Region {region}'s)",
                f"use arn:{partition}:iam::<account>:role/<path/name>",
            ))  # fmt: skip
        elif len(name) > NAME_MAX:
            problems.append(ConfigProblem(
                key, arn, f"a role or user name of at most {NAME_MAX} characters",
                "copy the role's ARN from the IAM console (aws iam get-role --role-name NAME)",
            ))  # fmt: skip
    repeated = sorted({a for a in arns if arns.count(a) > 1})
    if repeated:
        problems.append(ConfigProblem(
            key, repeated, "each principal once", "remove the repeated entries",
        ))  # fmt: skip
    return problems
