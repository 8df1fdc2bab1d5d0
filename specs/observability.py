"""What the observability add-on's collector may do: write metrics to the one AMP workspace
and the HyperPod cluster's logs (the wildcard rule judges the policy before it exists)."""

from __future__ import annotations

from core.refs import ref
from core.vocabulary import OBSERVABILITY
from specs.base import Desired
from specs.iam import allow, role_policy

LOG_ACTIONS = [
    "logs:CreateLogGroup",
    "logs:CreateLogStream",
    "logs:DescribeLogStreams",
    "logs:PutLogEvents",
    "logs:GetLogEvents",
    "logs:FilterLogEvents",
    "logs:PutRetentionPolicy",
    "logs:StartQuery",
    "logs:GetQueryResults",
]


def collector_policy(name: str, account_id: str, region: str, partition: str) -> Desired:
    """`account_id` is a placeholder (the caller's account, asked at deploy time)."""
    log_groups = f"arn:{partition}:logs:{region}:{account_id}:log-group:/aws/sagemaker/Clusters/*"
    return role_policy(
        f"{name}-collector-policy",
        (OBSERVABILITY,),
        ref(f"{name}-collector-role", "id"),
        allow(["aps:RemoteWrite"], [ref(f"{name}-amp", "arn")], "WriteMetrics"),
        allow(LOG_ACTIONS, [log_groups, f"{log_groups}:log-stream:*"], "WriteClusterLogs"),
        # DescribeLogGroups has no resource type: IAM matches it against "*" only, so scoped to
        # the log groups above it was never allowed (it lists names, reads no log events).
        # https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazoncloudwatchlogs.html
        allow(["logs:DescribeLogGroups"], ["*"], "FindLogGroups"),
    )
