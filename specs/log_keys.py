"""The KMS key of a CloudWatch log group: the account administers it, and CloudWatch Logs of the
Region may use it for that one group ("Encrypt log data in CloudWatch Logs using AWS KMS",
https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/encrypt-log-data-kms.html: the key
policy's statement for logs.<region>.amazonaws.com, with the encryption context naming the
group)."""

from __future__ import annotations

import json

from specs.base import Desired

KMS_KEY_TYPE = "aws:kms/key:Key"


def log_group_key(
    name: str,
    parents: tuple[str, ...],
    group_arn: str,
    *,
    account_id: str,
    partition: str,
    region: str,
    description: str,
    tags: dict[str, str],
) -> Desired:
    """The key `name` of the log group `group_arn` (placeholders allowed in both ARNs)."""
    policy = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "AccountAdministers",
                "Effect": "Allow",
                "Principal": {"AWS": f"arn:{partition}:iam::{account_id}:root"},
                "Action": "kms:*",
                "Resource": "*",
            },
            {
                "Sid": "CloudWatchLogsEncryptsThisGroup",
                "Effect": "Allow",
                "Principal": {"Service": f"logs.{region}.amazonaws.com"},
                "Action": [
                    "kms:Encrypt*",
                    "kms:Decrypt*",
                    "kms:ReEncrypt*",
                    "kms:GenerateDataKey*",
                    "kms:Describe*",
                ],
                "Resource": "*",
                "Condition": {"ArnEquals": {"kms:EncryptionContext:aws:logs:arn": group_arn}},
            },
        ],
    }
    return Desired(
        KMS_KEY_TYPE,
        name,
        parents,
        {
            "description": description,
            "enableKeyRotation": True,
            "deletionWindowInDays": 30,
            "policy": json.dumps(policy),
            "tags": tags,
        },
    )
