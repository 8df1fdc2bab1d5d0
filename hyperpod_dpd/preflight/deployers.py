"""Whether each `hyperpod-dpd:deployerArns` entry names a role or user IAM has, at its path.

The lifecycle bucket lets only these principals (and the stack's deploy role) write the nodes'
boot scripts, matching aws:PrincipalArn, which carries the role's full ARN, path included
(specs/buckets.py only_writers). An entry that names no principal exempts nobody: that admin's
`pulumi up` is refused at the script. The usual slip is an IAM Identity Center role without its
path: IAM Identity Center names a permission set's role
arn:aws:iam::<account>:role/aws-reserved/sso.amazonaws.com/[<region>/]AWSReservedSSO_<set>_<suffix>
(https://docs.aws.amazon.com/singlesignon/latest/userguide/referencingpermissionsets.html).
IAM's GetRole and GetUser take the name alone (names are unique in an account, whatever the
path) and return the ARN with its path
(https://docs.aws.amazon.com/IAM/latest/APIReference/API_GetRole.html,
https://docs.aws.amazon.com/IAM/latest/APIReference/API_GetUser.html): another ARN than the
entry's is the fix.
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from hyperpod_dpd.preflight.results import FAIL, PASS, WARN, Check
from hyperpod_dpd.shared.aws import ClientFactory
from settings import StackSettings
from settings.config.errors import set_fix

KEY = "hyperpod-dpd:deployerArns"


def deployer_checks(s: StackSettings, client: ClientFactory) -> list[Check]:
    """One check per entry; an entry of another account is not this caller's to look up."""
    if not s.deployer_arns:
        return []
    account = client("sts").get_caller_identity()["Account"]
    iam = client("iam")
    return [_entry(f"{KEY}[{i}]", arn, account, iam) for i, arn in enumerate(s.deployer_arns)]


def _entry(key: str, arn: str, account: str, iam: Any) -> Check:
    # arn:<partition>:iam::<account>:<role|user>/<path/>name (settings hold entries to that form).
    entry_account, resource = arn.split(":")[4], arn.split(":", 5)[5]
    kind, _, path_and_name = resource.partition("/")
    name = path_and_name.rsplit("/", 1)[-1]
    check = f"deployer {kind} {name}"
    if entry_account != account:
        return Check(check, WARN, f"{key} is in account {entry_account}, these credentials are "
                     f"of {account}: not looked up")  # fmt: skip
    try:
        if kind == "role":
            found = iam.get_role(RoleName=name)["Role"]["Arn"]
        else:
            found = iam.get_user(UserName=name)["User"]["Arn"]
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") != "NoSuchEntity":
            raise  # the step's fix names the permission
        lookup = (
            f"aws iam get-role --role-name {name} --query Role.Arn"
            if kind == "role"
            else f"aws iam get-user --user-name {name} --query User.Arn"
        )
        return Check(check, FAIL, f"{key} is {arn}: account {account} has no {kind} named {name}, "
                     "so the lifecycle bucket lets no one in by it",
                     f"set it to the {kind}'s ARN as `{lookup}` prints it (for an IAM Identity "
                     "Center permission set: the AWSReservedSSO_<set>_<suffix> role under "
                     "/aws-reserved/sso.amazonaws.com/), or remove it")  # fmt: skip
    if found != arn:
        return Check(check, FAIL, f"{key} is {arn}, but IAM's {kind} {name} is {found}: the "
                     "lifecycle bucket matches the full ARN, path included, and lets no one in "
                     "by this one", set_fix(key, found))  # fmt: skip
    return Check(check, PASS, f"{key}: IAM has {arn}")
