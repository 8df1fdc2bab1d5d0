"""What the HyperPod nodes may read: the execution role's policies as the prod and dev plans
render them, evaluated as IAM evaluates one request (tests/security/iam.py).

AmazonSageMakerClusterInstanceRolePolicy, attached to the role as HyperPod's docs ask, lets it
read every object of every `sagemaker-*` bucket of its account; whoever may put a script in such
a bucket (the SDK's default bucket `sagemaker-<region>-<account>`: AmazonSageMakerFullAccess)
and call sagemaker:UpdateCluster could point an instance group's LifeCycleConfig at it, and the
next node would run it as root. The role's inline Deny leaves the nodes the stack's own objects:
the lifecycle scripts and the staged weights.
"""

from __future__ import annotations

import pytest

from tests.conftest import run_stack, stack_raw
from tests.security.iam import Request, allows, statements

ACCOUNT = "123456789012"
# AmazonSageMakerClusterInstanceRolePolicy's S3 statement, as AWS publishes it
# (https://docs.aws.amazon.com/aws-managed-policy/latest/reference/AmazonSageMakerClusterInstanceRolePolicy.html).
MANAGED_S3 = {
    "Sid": "DataRetrievalFromS3BucketPermissions",
    "Effect": "Allow",
    "Action": ["s3:ListBucket", "s3:GetObject"],
    "Resource": ["arn:aws:s3:::sagemaker-*"],
    "Condition": {"StringEquals": {"aws:ResourceAccount": "${aws:PrincipalAccount}"}},
}
# Where the SageMaker SDK and AmazonSageMakerFullAccess's holders put their files.
DEFAULT_BUCKET = f"sagemaker-us-east-1-{ACCOUNT}"


@pytest.fixture(scope="module", params=["dev", "prod"])
def run(request):
    return run_stack(stack_raw(request.param), stack=request.param)


def _role_document(run) -> dict:
    inline = statements(run.named("hyperpod-execution-s3").inputs["policy"])
    return {"Version": "2012-10-17", "Statement": [MANAGED_S3, *inline]}


def _read(arn: str, account: str = ACCOUNT) -> Request:
    context = {"aws:PrincipalAccount": ACCOUNT, "aws:ResourceAccount": account}
    return Request("s3:GetObject", arn, context)


def test_the_nodes_read_no_script_of_the_accounts_other_sagemaker_buckets(run):
    document = _role_document(run)
    evil = f"arn:aws:s3:::{DEFAULT_BUCKET}/evil.sh"
    assert allows({"Statement": [MANAGED_S3]}, _read(evil))  # what the managed policy alone lets
    assert not allows(document, _read(evil))
    lifecycle = run.outputs["lifecycleBucket"]
    # Nor under the stack's own bucket name with a suffix (another bucket of the account).
    assert not allows(document, _read(f"arn:aws:s3:::{lifecycle}x/lifecycle/on_create.sh"))


def test_they_still_read_the_lifecycle_scripts_and_the_staged_weights(run):
    document = _role_document(run)
    lifecycle, models = run.outputs["lifecycleBucket"], run.outputs["modelBucket"]
    prefix = run.outputs["modelPrefix"].strip("/")
    assert allows(document, _read(f"arn:aws:s3:::{lifecycle}/lifecycle/on_create.sh"))
    assert allows(
        document, _read(f"arn:aws:s3:::{models}/{prefix}/model-00001-of-00030.safetensors")
    )
    # The models bucket beyond the staged prefixes stays closed (no grant, and the Deny).
    assert not allows(document, _read(f"arn:aws:s3:::{models}/models/other/config.json"))


def test_objects_of_other_accounts_are_not_the_denys(run):
    """AWS's own artifacts (other accounts' buckets) stay whatever their grants make them."""
    anywhere = {"Effect": "Allow", "Action": ["s3:GetObject"], "Resource": ["*"]}
    document = {"Statement": [anywhere, *_role_document(run)["Statement"]]}
    assert allows(document, _read("arn:aws:s3:::aws-owned-artifacts/x.tar", "999988887777"))
    assert not allows(document, _read(f"arn:aws:s3:::{DEFAULT_BUCKET}/evil.sh"))
