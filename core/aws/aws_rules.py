"""What AWS refuses that no schema the project reads says: character rules and quotas of the APIs
behind the program's resources, each with its source. CloudFormation's registry schemas (which
the tests hold every input to, tests/cfn/) leave these out; the settings checks refuse user
values that would break them, and the tests hold every registered input to them too."""

from __future__ import annotations

import re

from core.vocabulary import ELB_NAME_MAX

# --- EC2: security group and security group rule descriptions --------------------------------
# "Constraints: Up to 255 characters in length. Allowed characters are a-z, A-Z, 0-9, spaces,
# and ._-:/()#,@[]+=&;{}!$*": a group's GroupDescription (CreateSecurityGroup, which cannot be
# changed later: a new description replaces the group) and a rule's Description (IpRange,
# UserIdGroupPair).
# https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_CreateSecurityGroup.html
# https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_IpRange.html
# https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_UserIdGroupPair.html
EC2_DESCRIPTION_MAX = 255
EC2_DESCRIPTION_CHARS = "a-z, A-Z, 0-9, spaces and ._-:/()#,@[]+=&;{}!$*"
EC2_DESCRIPTION_PATTERN = r"^[a-zA-Z0-9 ._\-:/()#,@\[\]+=&;{}!$*]*$"


def ec2_description_problem(text: str) -> str | None:
    """Why EC2 refuses `text` as a security group's or a rule's description (None: it takes it)."""
    bad = sorted({c for c in text if not re.fullmatch(EC2_DESCRIPTION_PATTERN, c)})
    if bad:
        shown = " ".join(repr(c) for c in bad)
        return f"EC2 takes only {EC2_DESCRIPTION_CHARS} in a description ({shown} here)"
    if len(text) > EC2_DESCRIPTION_MAX:
        return f"EC2 takes at most {EC2_DESCRIPTION_MAX} characters in a description"
    return None


# --- Elastic Load Balancing: Application Load Balancers -------------------------------------
# "Target groups per action: 5" (not adjustable): a listener's forward action splits between at
# most 5 target groups.
# https://docs.aws.amazon.com/elasticloadbalancing/latest/application/load-balancer-limits.html
ALB_FORWARD_TARGET_GROUPS_MAX = 5
ALB_QUOTAS_URL = (
    "https://docs.aws.amazon.com/elasticloadbalancing/latest/application/load-balancer-limits.html"
)
# A listener rule's conditions: "You can specify up to three match evaluations per condition",
# and an HTTP header condition's "maximum size of each string is 128 characters" (ELB User Guide,
# "Condition types for listener rules").
ALB_CONDITION_VALUES_MAX = 3
ALB_CONDITION_VALUE_LENGTH_MAX = 128
ALB_CONDITIONS_URL = (
    "https://docs.aws.amazon.com/elasticloadbalancing/latest/application/rule-condition-types.html"
)
# TargetGroupTuple.Weight: "The weight. The range is 0 to 999."
# https://docs.aws.amazon.com/elasticloadbalancing/latest/APIReference/API_TargetGroupTuple.html
ALB_WEIGHT_MIN, ALB_WEIGHT_MAX = 0, 999
# CreateLoadBalancer / CreateTargetGroup Name: "can have a maximum of 32 characters, must contain
# only alphanumeric characters or hyphens, and must not begin or end with a hyphen" (a load
# balancer's also "must not begin with internal-").
# https://docs.aws.amazon.com/elasticloadbalancing/latest/APIReference/API_CreateLoadBalancer.html
# https://docs.aws.amazon.com/elasticloadbalancing/latest/APIReference/API_CreateTargetGroup.html
ELB_NAME_PATTERN = (
    rf"^(?!internal-)[a-zA-Z0-9](?:[a-zA-Z0-9-]{{0,{ELB_NAME_MAX - 2}}}[a-zA-Z0-9])?$"
)
TARGET_GROUP_NAME_PATTERN = rf"^[a-zA-Z0-9](?:[a-zA-Z0-9-]{{0,{ELB_NAME_MAX - 2}}}[a-zA-Z0-9])?$"
