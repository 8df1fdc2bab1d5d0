"""How IAM names one principal in aws:PrincipalArn: an IAM role or user ARN with its path, never
an assumed-role session's ARN (arn:aws:sts::...:assumed-role/...) nor a pattern ("aws:PrincipalArn",
AWS global condition context keys,
https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-keys.html#condition-keys-principalarn).
The settings hold hyperpod-dpd:deployerArns to it; the boot-scripts rule holds the lifecycle
bucket's exemptions to it (a `*` there would exempt every principal)."""

from __future__ import annotations

import re

# The path and name characters IAM allows (IAM API Reference, CreateRole: Path and RoleName,
# https://docs.aws.amazon.com/IAM/latest/APIReference/API_CreateRole.html): no `*` nor `?`.
PRINCIPAL_ARN_PATTERN = r"^arn:aws[a-z-]*:iam::[0-9]{12}:(role|user)/([\w+=,.@-]+/)*[\w+=,.@-]+$"


def is_principal_arn(value: object) -> bool:
    """Whether `value` names exactly one IAM role or user."""
    return isinstance(value, str) and re.fullmatch(PRINCIPAL_ARN_PATTERN, value) is not None
