"""The traffic split's access logs (`trafficListener.accessLogs`): a bucket of its own, SSE-S3
(the only encryption ALB log delivery takes), and who may write into it (specs/traffic/__init__.py
describes the split)."""

from __future__ import annotations

from core.aws.elb_accounts import ELB_LOG_ACCOUNTS
from core.refs import ref
from core.vocabulary import TRAFFIC_SPLIT
from specs.buckets import BucketSpec, secure_bucket

ACCESS_LOG_PREFIX = "traffic"
# ALB access logs: "The only server-side encryption option that's supported is Amazon S3-managed
# keys (SSE-S3)", and the bucket policy lets ELB write under <prefix>/AWSLogs/<account>/ (Elastic
# Load Balancing, "Enable access logs for your Application Load Balancer",
# https://docs.aws.amazon.com/elasticloadbalancing/latest/application/enable-access-logging.html):
# in a Region launched before August 2022 as the Region's ELB account (core/aws/elb_accounts.py),
# in a newer one as the log delivery service principal.
LOG_DELIVERY = "logdelivery.elasticloadbalancing.amazonaws.com"


def log_bucket(
    name: str, tags: dict[str, str], account_id: str, partition: str, region: str, days: int
) -> BucketSpec:
    """The access logs' bucket: the stack's secure bucket (private, TLS-only, versioned), SSE-S3,
    its objects expiring after `days`; ELB may put objects under its prefix, for this account's
    load balancers only (the key names the balancer's account)."""
    return secure_bucket(
        f"{name}-logs",
        tags,
        within=(TRAFFIC_SPLIT,),
        force_destroy=True,
        policy_statements=elb_log_delivery(
            ref(f"{name}-logs-bucket", "arn"),
            account_id,
            partition,
            region,  # as secure_bucket names it
        ),
        expire_days=days,
    )


def elb_log_delivery(
    bucket_arn: str, account_id: str, partition: str, region: str
) -> tuple[dict, ...]:
    """Who writes an ALB's access logs into `bucket_arn` in `region`, as the ELB user guide
    grants it (the page cited at LOG_DELIVERY). ELB writes a test object
    (<prefix>/AWSLogs/<account>/ELBAccessLogTestFile) when logging is enabled, so a write it is
    refused fails the load balancer's creation.

    - A Region launched before August 2022: the Region's ELB account (its root, as the guide
      writes it). Its request is an account's, not a service principal's: it carries no
      aws:SourceAccount, so that statement has no condition; the object key, which names the
      balancer's account, keeps it to this account's load balancers.
    - Every Region: the log delivery service principal, the guide's policy for the newer
      Regions, for this account only (aws:SourceAccount).
    """
    objects = f"{bucket_arn}/{ACCESS_LOG_PREFIX}/AWSLogs/{account_id}/*"
    statements: list[dict] = []
    if region in ELB_LOG_ACCOUNTS:
        statements.append({
            "Sid": "ElbAccountLogDelivery",
            "Effect": "Allow",
            "Principal": {"AWS": f"arn:{partition}:iam::{ELB_LOG_ACCOUNTS[region]}:root"},
            "Action": "s3:PutObject",
            "Resource": objects,
        })  # fmt: skip
    statements.append({
        "Sid": "ElbLogDelivery",
        "Effect": "Allow",
        "Principal": {"Service": LOG_DELIVERY},
        "Action": "s3:PutObject",
        "Resource": objects,
        "Condition": {"StringEquals": {"aws:SourceAccount": account_id}},
    })  # fmt: skip
    return tuple(statements)
