"""Who may change the nodes' boot scripts: the lifecycle bucket's policy as the plan renders it,
evaluated as IAM evaluates a request in the bucket's account (an identity policy allows, a
Deny of the bucket policy overrides it; tests/security/iam.py).

Any SageMaker execution role of the account holding an AWS-managed policy such as
AmazonSageMakerFeatureStoreAccess may put objects into every bucket whose name holds
"sagemaker", which HyperPod requires of this one. With the stack's policy, only the principals
of the stack's deploy role (ci.deployRoleArn) and hyperpod-dpd:deployerArns may write, delete or un-version
the scripts; HyperPod's execution role still reads them.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import edit, run_stack, stack_raw
from tests.security.iam import Request, allows, statements

# The offline engine's caller (hyperpod_dpd/plan/fakes.py): the issuer of its session.
SESSION = "arn:aws:iam::123456789012:role/offline-plan"
DEPLOY_ROLE = "arn:aws:iam::111122223333:role/hyperpod-dpd-dev-deploy"  # ci.deployRoleArn
ADMIN = "arn:aws:iam::111122223333:role/PlatformAdmin"  # Pulumi.dev.yaml deployerArns
SAGEMAKER_USER = "arn:aws:iam::123456789012:role/service-role/AmazonSageMaker-ExecutionRole"
# AmazonSageMakerFeatureStoreAccess's first statement, widened to every object action: what a
# principal of the account may be granted on *sagemaker* buckets without naming this one.
MANAGED = {
    "Effect": "Allow",
    "Action": ["s3:*"],
    "Resource": [
        "arn:aws:s3:::*SageMaker*",
        "arn:aws:s3:::*Sagemaker*",
        "arn:aws:s3:::*sagemaker*",
    ],
}
CHANGES = ("s3:PutObject", "s3:DeleteObject", "s3:DeleteObjectVersion", "s3:ReplicateObject")


@pytest.fixture(scope="module")
def dev():
    return run_stack(stack_raw("dev"))


def _bucket_policy(run) -> list[dict]:
    return statements(run.named("lifecycle-scripts-tls-only").inputs["policy"])


def _with(identity: dict, run) -> dict:
    return {"Version": "2012-10-17", "Statement": [identity, *_bucket_policy(run)]}


def _script(run) -> str:
    return f"arn:aws:s3:::{run.outputs['lifecycleBucket']}/lifecycle/on_create.sh"


@pytest.mark.parametrize("action", CHANGES)
def test_a_sagemaker_policy_holder_cannot_change_the_script(dev, action):
    request = Request(action, _script(dev), {"aws:PrincipalArn": SAGEMAKER_USER})
    assert not allows(_with(MANAGED, dev), request)


def test_nor_suspend_versioning_or_expire_the_old_versions(dev):
    bucket = f"arn:aws:s3:::{dev.outputs['lifecycleBucket']}"
    for action in ("s3:PutBucketVersioning", "s3:PutLifecycleConfiguration"):
        request = Request(action, bucket, {"aws:PrincipalArn": SAGEMAKER_USER})
        assert not allows(_with(MANAGED, dev), request), action
    versioning = dev.named("lifecycle-scripts-versioning").inputs
    assert versioning["versioningConfiguration"] == {"status": "Enabled"}


@pytest.mark.parametrize("principal", [DEPLOY_ROLE, ADMIN])
def test_the_stacks_deploy_role_and_the_listed_deployers_still_write(dev, principal):
    for action in CHANGES:
        request = Request(action, _script(dev), {"aws:PrincipalArn": principal})
        assert allows(_with(MANAGED, dev), request), (principal, action)


def test_with_a_named_deploy_role_the_session_running_the_program_is_not_a_writer(dev):
    """ci.deployRoleArn names who deploys whoever runs the program: a pull request's preview
    (another role) plans no change of the policy, and writes nothing."""
    request = Request("s3:PutObject", _script(dev), {"aws:PrincipalArn": SESSION})
    assert not allows(_with(MANAGED, dev), request)


def test_hyperpod_still_reads_the_scripts(dev):
    """The execution role's own grant (its inline policy) is not denied: HyperPod only reads."""
    grant = json.loads(dev.named("hyperpod-execution-s3").inputs["policy"])
    role = "arn:aws:iam::123456789012:role/hyperpod-execution-role-0123456"
    document = {"Version": "2012-10-17", "Statement": [*grant["Statement"], *_bucket_policy(dev)]}
    read = Request("s3:GetObject", _script(dev), {"aws:PrincipalArn": role})
    assert allows(document, read)
    write = Request("s3:PutObject", _script(dev), {"aws:PrincipalArn": role})
    assert not allows(_with(MANAGED, dev), write)


def test_a_request_without_a_principal_arn_is_denied_too(dev):
    """An AWS service principal's request carries no aws:PrincipalArn: no service writes here."""
    assert not allows(_with(MANAGED, dev), Request("s3:PutObject", _script(dev)))


def test_without_a_named_deploy_role_nor_deployers_only_the_one_running_pulumi_up_writes():
    """The first deploy of a stack that names no one never locks its deployer out."""
    raw = edit(edit(stack_raw("dev"), "hyperpod-dpd:deployerArns"), "hyperpod-dpd:ci.deployRoleArn")
    run = run_stack(raw)
    (deny,) = [s for s in _bucket_policy(run) if s.get("Sid") == "DenyChangesButByDeployers"]
    assert deny["Condition"] == {"ArnNotLike": {"aws:PrincipalArn": SESSION}}
    for principal, allowed in ((SESSION, True), (DEPLOY_ROLE, False), (ADMIN, False)):
        request = Request("s3:PutObject", _script(run), {"aws:PrincipalArn": principal})
        assert allows(_with(MANAGED, run), request) is allowed, principal
