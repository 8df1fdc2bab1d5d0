"""Whether the HyperPod cluster still boots its nodes with the stack's lifecycle scripts and
execution role: `hyperpod-dpd preflight` and `verify --stack` both ask (DescribeCluster).

Whoever may call sagemaker:UpdateCluster can point an instance group's LifeCycleConfig at
another S3 path or entrypoint (a script in any `sagemaker-*` bucket), or give the group another
execution role; every node HyperPod creates or recovers afterwards runs that script as root, and
the lifecycle bucket's policy and the object's digest never see it. The execution role's Deny
(specs/hyperpod.py no_other_reads) makes such a script unreadable with the stack's role; this
check finds the change itself, whichever role the group runs.

DescribeCluster returns each instance group (ClusterInstanceGroupDetails) with its
LifeCycleConfig and ExecutionRole
(https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DescribeCluster.html,
https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ClusterInstanceGroupDetails.html);
LifeCycleConfig holds SourceS3Uri (the S3 path of the scripts), OnCreate (the entrypoint under
it, run as a node is created) and OnInitComplete (another entrypoint, run after the AMI's own
initialization), https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ClusterLifeCycleConfig.html.
The stack sets SourceS3Uri and OnCreate (specs/hyperpod.py instance_group) and no OnInitComplete.
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from hyperpod_dpd.shared.boot_script import Deployed, Verdict
from specs.lifecycle import KEY_PREFIX, ON_CREATE

CHECK = "lifecycle config unchanged"
REF = "docs/troubleshooting.md#lifecycle-config-changed"
CAUSE = (
    "the HyperPod cluster's instance groups no longer boot with the stack's lifecycle scripts "
    "or execution role: someone called UpdateCluster outside the stack. Every node HyperPod "
    "created or recovered since ran that configuration's script as root"
)
FIX = (
    "find who (CloudTrail: eventName UpdateCluster); run `pulumi up --refresh --stack {stack}` "
    "as a deployer (the refresh reads the groups, the update sets the stack's back); replace "
    "the nodes launched since, and rotate what they could reach"
)


def expected(where: Deployed) -> dict[str, str | None]:
    """What the stack declares for every instance group (None: declares none)."""
    return {
        "SourceS3Uri": f"s3://{where.bucket}/{KEY_PREFIX}/",
        "OnCreate": ON_CREATE,
        "OnInitComplete": None,
    }


def compare(sagemaker: Any, where: Deployed) -> Verdict:
    """Each instance group of the cluster against `expected` and the stack's execution role."""
    if where.bucket is None:
        return Verdict("skip", f"not compared: {where.note}; not deployed yet, or run where "
                       "`pulumi stack output` works")  # fmt: skip
    if where.cluster_arn is None:
        return Verdict("skip", "not compared: the stack records no hyperpodClusterArn")
    try:
        groups = sagemaker.describe_cluster(ClusterName=where.cluster_arn)["InstanceGroups"]
    except ClientError as exc:
        error = exc.response.get("Error", {})
        code = error.get("Code", "")
        if code in ("AccessDenied", "AccessDeniedException"):
            return Verdict("FAIL", f"{where.cluster_arn} could not be described ({code})",
                           fix="run as a deployer or an admin: the credentials need "
                           "sagemaker:DescribeCluster on the cluster", ref=REF)  # fmt: skip
        return Verdict("FAIL", f"{where.cluster_arn} could not be described ({code}: "
                       f"{error.get('Message', '')})", fix=f"run `pulumi up --refresh --stack "
                       f"{where.stack}`: the stack's cluster is not what AWS has", ref=REF)  # fmt: skip
    except BotoCoreError as exc:
        return Verdict("FAIL", f"{where.cluster_arn} could not be described ({exc})",
                       fix="run with AWS credentials of the stack's account", ref=REF)  # fmt: skip
    differences = [d for g in groups for d in _differences(g, where)]
    names = ", ".join(sorted(g["InstanceGroupName"] for g in groups)) or "none"
    if differences:
        return Verdict("FAIL", "; ".join(differences), CAUSE, FIX.format(stack=where.stack), REF)
    role = (
        " and execution role"
        if where.execution_role_arn
        else " (execution role not compared: the stack records no hyperpodExecutionRoleArn)"
    )
    return Verdict("pass", f"every instance group ({names}) boots with the stack's "
                   f"{expected(where)['SourceS3Uri']}{ON_CREATE}{role}")  # fmt: skip


def _differences(group: dict, where: Deployed) -> list[str]:
    name = group["InstanceGroupName"]
    config = group.get("LifeCycleConfig") or {}
    out = []
    for field, want in expected(where).items():
        got = config.get(field)
        if _normal(field, got) != _normal(field, want):
            out.append(f"group {name}: LifeCycleConfig.{field} is {_said(got)}, the stack's "
                       f"is {_said(want)}")  # fmt: skip
    role = group.get("ExecutionRole")
    if where.execution_role_arn and role != where.execution_role_arn:
        out.append(f"group {name}: ExecutionRole is {_said(role)}, the stack's is "
                   f"{where.execution_role_arn}")  # fmt: skip
    return out


def _normal(field: str, value: str | None) -> str | None:
    # s3://b/lifecycle and s3://b/lifecycle/ name the same scripts.
    return value.rstrip("/") if field == "SourceS3Uri" and value else value or None


def _said(value: str | None) -> str:
    return value if value else "not set"
