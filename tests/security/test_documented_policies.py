"""Every statement the stack writes for an AWS service or another AWS account (trust, bucket, key
and topic policies) has the conditions AWS documents for that service: no fewer (a confused
deputy), and no more than the service sends (a condition on a key it never sends fails the
request: a role never assumed, a log never delivered, an alert never published). Each pair
below names the page; a principal no row covers fails here until its page is read.
"""

from __future__ import annotations

import json

import pytest

from core.aws.elb_accounts import ELB_LOG_ACCOUNTS
from specs.traffic.logs import LOG_DELIVERY, elb_log_delivery
from tests.conftest import run_stack, stack_raw
from tests.security.iam import Request, allows, listed
from tests.security.scanners import policy_documents

ACCOUNT = "123456789012"  # the offline engine's account
SOURCE_ACCOUNT = ("StringEquals", "aws:SourceAccount")
# (document, principal) -> the condition (operator, key) pairs AWS documents, and where.
DOCUMENTED: dict[tuple[str, str], tuple[frozenset, str]] = {
    ("eks-cluster-role.assumeRolePolicy", "eks.amazonaws.com"): (
        frozenset(),
        "https://docs.aws.amazon.com/eks/latest/userguide/cluster-iam-role.html",
    ),
    # No source shows HyperPod sending a source key (that page has no HyperPod example); AWS's
    # HyperPod templates trust the service with no condition (infra/hyperpod.py).
    ("hyperpod-execution-role.assumeRolePolicy", "sagemaker.amazonaws.com"): (
        frozenset(),
        "https://github.com/aws/sagemaker-hyperpod-cluster-setup/blob/225929764f92613e15ff951569564a71f3711470/eks/cloudformation/sagemaker-iam-role-template.yaml",
    ),
    ("inference-operator-execution-role.assumeRolePolicy", "sagemaker.amazonaws.com"): (
        frozenset({SOURCE_ACCOUNT, ("ArnLike", "aws:SourceArn")}),
        "https://docs.aws.amazon.com/sagemaker/latest/dg/security-confused-deputy-prevention.html",
    ),
    ("network-flow-logs-role.assumeRolePolicy", "vpc-flow-logs.amazonaws.com"): (
        frozenset({SOURCE_ACCOUNT, ("ArnLike", "aws:SourceArn")}),
        "https://docs.aws.amazon.com/vpc/latest/userguide/flow-logs-iam-role.html",
    ),
    ("observability-grafana-role.assumeRolePolicy", "grafana.amazonaws.com"): (
        frozenset({SOURCE_ACCOUNT, ("ArnLike", "aws:SourceArn")}),
        "https://docs.aws.amazon.com/grafana/latest/userguide/AMG-manage-permissions.html",
    ),
    ("ci-runner-role.assumeRolePolicy", "codebuild.amazonaws.com"): (
        frozenset({SOURCE_ACCOUNT, ("ArnLike", "aws:SourceArn")}),
        "https://docs.aws.amazon.com/codebuild/latest/userguide/cross-service-confused-deputy-prevention.html",
    ),
    ("observability-collector-role.assumeRolePolicy", "pods.eks.amazonaws.com"): (
        frozenset({SOURCE_ACCOUNT, ("ArnEquals", "aws:SourceArn")}),
        "https://docs.aws.amazon.com/eks/latest/userguide/pod-id-role.html",
    ),
    ("network-flow-logs-key", "logs.{region}.amazonaws.com"): (
        frozenset({("ArnEquals", "kms:EncryptionContext:aws:logs:arn")}),
        "https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/encrypt-log-data-kms.html",
    ),
    ("ci-runner-logs-key", "logs.{region}.amazonaws.com"): (
        frozenset({("ArnEquals", "kms:EncryptionContext:aws:logs:arn")}),
        "https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/encrypt-log-data-kms.html",
    ),
    ("observability-alerts-key", "aps.amazonaws.com"): (
        frozenset({SOURCE_ACCOUNT, ("ArnEquals", "aws:SourceArn")}),
        "https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html",
    ),
    ("observability-alerts-policy", "aps.amazonaws.com"): (
        frozenset({SOURCE_ACCOUNT, ("ArnEquals", "aws:SourceArn")}),
        "https://docs.aws.amazon.com/prometheus/latest/userguide/AMP-alertmanager-receiver-AMPpermission.html",
    ),
    ("traffic-logs-tls-only", LOG_DELIVERY): (
        frozenset({SOURCE_ACCOUNT}),
        "https://docs.aws.amazon.com/elasticloadbalancing/latest/application/enable-access-logging.html",
    ),
    # The Region's ELB account: an account's request carries no aws:SourceAccount.
    ("traffic-logs-tls-only", "arn:aws:iam::{elb}:root"): (
        frozenset(),
        "https://docs.aws.amazon.com/elasticloadbalancing/latest/application/enable-access-logging.html",
    ),
    # The account administers its own keys (KMS's default key policy).
    ("network-flow-logs-key", "arn:aws:iam::{account}:root"): (
        frozenset(),
        "https://docs.aws.amazon.com/kms/latest/developerguide/key-policy-default.html",
    ),
    ("ci-runner-logs-key", "arn:aws:iam::{account}:root"): (
        frozenset(),
        "https://docs.aws.amazon.com/kms/latest/developerguide/key-policy-default.html",
    ),
    ("observability-alerts-key", "arn:aws:iam::{account}:root"): (
        frozenset(),
        "https://docs.aws.amazon.com/kms/latest/developerguide/key-policy-default.html",
    ),
}


def _principals(statement: dict) -> list[str]:
    """The services and accounts a statement names ("*": none of them)."""
    p = statement.get("Principal")
    if not isinstance(p, dict):
        return []
    return [x for key in ("Service", "AWS") for x in listed(p.get(key) or [])]


def _statements(stack: str):
    run = run_stack(stack_raw(stack), stack=stack)
    region = stack_raw(stack)["aws:region"]
    names = {"region": region, "account": ACCOUNT, "elb": ELB_LOG_ACCOUNTS.get(region, "-")}
    documented = {(doc, p.format(**names)): v for (doc, p), v in DOCUMENTED.items()}
    for d in policy_documents(run):
        for s in json.loads(d["policy"])["Statement"]:
            for principal in _principals(s):
                yield d["name"], principal, s, documented.get((d["name"], principal))


@pytest.mark.parametrize("stack", ["dev", "prod", "canary"])
def test_each_service_statement_has_the_conditions_aws_documents(stack):
    wrong = []
    for doc, principal, s, row in _statements(stack):
        if row is None:
            wrong.append(f"{doc} {principal}: no row in DOCUMENTED: read its AWS page, add one")
            continue
        conditions = frozenset((op, k) for op, keys in (s.get("Condition") or {}).items()
                               for k in keys)  # fmt: skip
        if conditions != row[0]:
            wrong.append(f"{doc} {principal}: {sorted(conditions)}, {row[1]} documents "
                         f"{sorted(row[0])}")  # fmt: skip
        if SOURCE_ACCOUNT in conditions:
            assert s["Condition"]["StringEquals"]["aws:SourceAccount"] == ACCOUNT
    assert not wrong, "\n".join(wrong)


def test_alb_logs_in_a_region_before_august_2022_are_granted_to_its_elb_account():
    """The canary's us-east-2: ELB's account 033677994240 writes the logs (and its test object
    when logging is enabled), under this account's key prefix only."""
    run = run_stack(stack_raw("canary"), stack="canary")
    policy = run.named("traffic-logs-tls-only").inputs["policy"]
    bucket = json.loads(policy)["Statement"][0]["Resource"][0]
    test_object = f"{bucket}/traffic/AWSLogs/{ACCOUNT}/ELBAccessLogTestFile"
    elb = {"aws:PrincipalArn": "arn:aws:iam::033677994240:root"}
    assert allows(policy, Request("s3:PutObject", test_object, elb))
    other = f"{bucket}/traffic/AWSLogs/999999999999/ELBAccessLogTestFile"
    assert not allows(policy, Request("s3:PutObject", other, elb))


@pytest.mark.parametrize(
    ("region", "account"),
    [("us-east-2", "033677994240"), ("eu-west-1", "156460612806"),
     ("us-gov-west-1", "048591011584"), ("me-central-1", None), ("ap-southeast-5", None)],
)  # fmt: skip
def test_the_delivery_principal_follows_the_region(region, account):
    """Older Regions: their ELB account (the ELB guide's list) and the service principal; a
    Region launched since August 2022 (UAE, Malaysia): the service principal alone."""
    partition = "aws-us-gov" if region.startswith("us-gov") else "aws"
    statements = elb_log_delivery(f"arn:{partition}:s3:::b", ACCOUNT, partition, region)
    principals = [next(iter(s["Principal"].values())) for s in statements]
    expected = [f"arn:{partition}:iam::{account}:root"] if account else []
    assert principals == [*expected, LOG_DELIVERY]


def test_the_flow_log_role_has_every_permission_the_vpc_guide_lists():
    """ "IAM role for publishing flow logs to CloudWatch Logs": CreateLogGroup, CreateLogStream,
    PutLogEvents, DescribeLogGroups, DescribeLogStreams, on the stack's group."""
    run = run_stack(stack_raw("dev"))
    policy = run.named("network-flow-logs-policy").inputs["policy"]
    group = f"arn:aws:logs:us-east-2:{ACCOUNT}:log-group:/hyperpod-dpd/dev/vpc-flow-logs"
    for action, resource in (
        ("logs:CreateLogGroup", group),
        ("logs:CreateLogStream", f"{group}:log-stream:eni-0a1b"),
        ("logs:PutLogEvents", f"{group}:log-stream:eni-0a1b"),
        ("logs:DescribeLogGroups", "*"),
        ("logs:DescribeLogStreams", group),
    ):
        assert allows(policy, Request(action, resource)), action
    other = f"arn:aws:logs:us-east-2:{ACCOUNT}:log-group:/other"
    assert not allows(policy, Request("logs:PutLogEvents", f"{other}:log-stream:x"))
