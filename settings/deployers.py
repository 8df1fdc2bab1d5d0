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
from settings.cluster.aws_limits import check_iam_arns
from settings.config.errors import full_key, set_fix

KEY = ("deployerArns",)


def check_deployers(arns: list[str], region: str) -> list[ConfigProblem]:
    """Each ARN of the stack's partition, with a name IAM accepts, listed once."""
    key = full_key(KEY)
    problems = check_iam_arns(key, arns, region)
    repeated = sorted({a for a in arns if arns.count(a) > 1})
    if repeated:
        problems.append(ConfigProblem(
            key, repeated, "each principal once", set_fix(key, list(dict.fromkeys(arns))),
        ))  # fmt: skip
    return problems
