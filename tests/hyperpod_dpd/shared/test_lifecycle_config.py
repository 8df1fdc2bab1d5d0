"""`preflight` and `verify --stack` describe the HyperPod cluster (SageMaker faked by botocore's
Stubber: requests and answers validated against the service's model) and compare each instance
group's LifeCycleConfig and ExecutionRole with what the stack declares: an UpdateCluster that
points a group at another script, entrypoint or role fails, naming the group and both values."""

from __future__ import annotations

import boto3
import pytest
from botocore.stub import Stubber

from hyperpod_dpd.shared.boot_script import Deployed
from hyperpod_dpd.shared.lifecycle_config import compare
from tests.conftest import run_stack, stack_raw

ACCOUNT = "123456789012"


@pytest.fixture(scope="module")
def dev():
    """What the dev plan declares: the outputs `pulumi up` records, and the instance groups as
    DescribeCluster would return them."""
    run = run_stack(stack_raw("dev"))
    where = Deployed(
        "dev",
        run.outputs["lifecycleBucket"],
        run.outputs["lifecycleScriptSha256"],
        version_id=run.outputs["lifecycleScriptVersionId"],
        cluster_arn=run.outputs["hyperpodClusterArn"],
        execution_role_arn=run.outputs["hyperpodExecutionRoleArn"],
    )
    groups = [
        {
            "InstanceGroupName": g["instanceGroupName"],
            "InstanceType": g["instanceType"],
            "ExecutionRole": g["executionRole"],
            "LifeCycleConfig": {
                "SourceS3Uri": g["lifeCycleConfig"]["sourceS3Uri"],
                "OnCreate": g["lifeCycleConfig"]["onCreate"],
            },
        }
        for g in run.named("hyperpod-cluster").inputs["instanceGroups"]
    ]
    return where, groups


def _described(where: Deployed, groups: list[dict], error: str | None = None):
    sagemaker = boto3.client("sagemaker", region_name="us-east-2", aws_access_key_id="x",
                             aws_secret_access_key="x")  # fmt: skip
    with Stubber(sagemaker) as stub:
        expected = {"ClusterName": where.cluster_arn}
        if error:
            stub.add_client_error("describe_cluster", error, expected_params=expected)
        else:
            answer = {
                "ClusterArn": where.cluster_arn,
                "ClusterStatus": "InService",
                "InstanceGroups": groups,
            }
            stub.add_response("describe_cluster", answer, expected)
        verdict = compare(sagemaker, where)
        stub.assert_no_pending_responses()
    return verdict


def _changed(groups: list[dict], name: str, **config) -> list[dict]:
    out = []
    for g in groups:
        g = {**g, "LifeCycleConfig": dict(g["LifeCycleConfig"])}
        if g["InstanceGroupName"] == name:
            role = config.pop("ExecutionRole", None)
            if role:
                g["ExecutionRole"] = role
            g["LifeCycleConfig"].update(config)
        out.append(g)
    return out


def test_the_groups_as_the_dev_plan_declares_them_pass(dev):
    where, groups = dev
    v = _described(where, groups)
    assert v.result == "pass", v
    assert "decode, prefill, system" in v.detail and "execution role" in v.detail


def test_a_group_pointed_at_another_bucket_fails_naming_it_and_both_values(dev):
    where, groups = dev
    evil = f"s3://sagemaker-us-east-1-{ACCOUNT}/"
    v = _described(where, _changed(groups, "decode", SourceS3Uri=evil))
    assert v.result == "FAIL"
    assert (
        f"group decode: LifeCycleConfig.SourceS3Uri is {evil}, the stack's is "
        f"s3://{where.bucket}/lifecycle/"
    ) in v.detail
    assert "prefill" not in v.detail
    assert "UpdateCluster" in v.cause and "pulumi up --refresh --stack dev" in v.fix
    assert v.ref == "docs/troubleshooting.md#lifecycle-config-changed"


def test_another_entrypoint_or_an_init_complete_script_fails(dev):
    where, groups = dev
    changed = _changed(groups, "prefill", OnCreate="evil.sh")
    changed = _changed(changed, "system", OnInitComplete="later.sh")
    v = _described(where, changed)
    assert v.result == "FAIL"
    assert "group prefill: LifeCycleConfig.OnCreate is evil.sh, the stack's is on_create.sh" in (
        v.detail
    )
    assert "group system: LifeCycleConfig.OnInitComplete is later.sh, the stack's is not set" in (
        v.detail
    )


def test_another_execution_role_fails(dev):
    """A role without the stack's Deny would read a script anywhere in the account's buckets."""
    where, groups = dev
    role = f"arn:aws:iam::{ACCOUNT}:role/service-role/AmazonSageMaker-ExecutionRole-1"
    v = _described(where, _changed(groups, "decode", ExecutionRole=role))
    assert v.result == "FAIL"
    assert f"group decode: ExecutionRole is {role}, the stack's is {where.execution_role_arn}" in (
        v.detail
    )


def test_the_same_path_without_its_trailing_slash_passes(dev):
    where, groups = dev
    same = _changed(groups, "decode", SourceS3Uri=f"s3://{where.bucket}/lifecycle")
    assert _described(where, same).result == "pass"


def test_a_caller_who_may_not_describe_the_cluster_is_told_the_permission(dev):
    where, _ = dev
    v = _described(where, [], error="AccessDeniedException")
    assert v.result == "FAIL" and "sagemaker:DescribeCluster" in v.fix


def test_without_the_clusters_output_it_is_not_compared(dev):
    where, _ = dev
    bare = Deployed("dev", where.bucket, where.sha256)
    v = compare(None, bare)
    assert v.result == "skip" and "hyperpodClusterArn" in v.detail
