"""A private, encrypted, versioned S3 bucket that refuses plain-HTTP requests.

Used for the lifecycle scripts, the model checkpoints and the operator's TLS certificates:
every bucket of the stack gets the same guarantees from this one function.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.refs import ref
from core.vocabulary import (
    BUCKET_ENCRYPTION_TYPE,
    BUCKET_LIFECYCLE_TYPE,
    BUCKET_OWNERSHIP_TYPE,
    BUCKET_POLICY_TYPE,
    BUCKET_PUBLIC_ACCESS_BLOCK_TYPE,
    BUCKET_TYPE,
    BUCKET_VERSIONING_TYPE,
    SECURE_BUCKET,
)
from specs.base import Desired
from specs.iam import Statement, document_text


@dataclass(frozen=True)
class BucketSpec:
    name: str  # the SecureBucket component's name
    parents: tuple[str, ...]  # component type tokens down to and including SecureBucket
    bucket: Desired
    guards: tuple[Desired, ...]  # public access block, ownership, encryption, versioning, TLS
    retain_on_delete: bool  # the bucket *and its guards* outlive `pulumi destroy`
    protect: bool = False  # Pulumi refuses to delete or replace the bucket

    @property
    def bucket_name(self) -> str:
        return ref(self.bucket.name, "bucket")

    @property
    def arn(self) -> str:
        return ref(self.bucket.name, "arn")


# What changes the objects of a bucket or their history: writing or copying an object (multipart
# uploads and CopyObject need s3:PutObject), deleting an object or one of its versions,
# replication writing into it, and the bucket settings that keep the history (versioning, and
# lifecycle rules that could expire the versions). Its policy may still be replaced: a stack that
# names no deploy role writes the one running `pulumi up` into it (so a first deployer is never
# locked out); IAM principals that may put bucket policies hold more than write access anyway.
CHANGES_OBJECTS = (
    "s3:PutObject",
    "s3:DeleteObject",
    "s3:DeleteObjectVersion",
    "s3:ReplicateObject",
    "s3:ReplicateDelete",
    "s3:PutBucketVersioning",
    "s3:PutLifecycleConfiguration",
)


def only_writers(bucket_arn: str, writers: tuple[str, ...], deployer: str) -> Statement:
    """A bucket policy statement denying CHANGES_OBJECTS to every principal but `writers` (IAM
    role or user ARNs) and `deployer` (a placeholder for the stack's deploy role: ci.deployRoleArn,
    else the issuer of the session running `pulumi up`, program/stack_config.py). Reads are
    untouched.

    aws:PrincipalArn is the role's ARN (with its path) for every session of the role, never
    the assumed-role session's ARN ("aws:PrincipalArn", AWS global condition context keys,
    https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-keys.html#condition-keys-principalarn),
    so a Deny unless the principal is listed holds for each session of a listed role. Two
    operators of one condition must both hold (AND): not a listed writer, and not the deployer,
    which may also be listed. A request without the key (an AWS service principal's) matches
    the negated operators and is denied: no service writes here.
    """
    condition: dict = {}
    if writers:
        condition["ArnNotEquals"] = {"aws:PrincipalArn": list(writers)}
    condition["ArnNotLike"] = {"aws:PrincipalArn": deployer}
    return {
        "Sid": "DenyChangesButByDeployers",
        "Effect": "Deny",
        "Principal": "*",
        "Action": list(CHANGES_OBJECTS),
        "Resource": [bucket_arn, f"{bucket_arn}/*"],
        "Condition": condition,
    }


def secure_bucket(
    name: str,
    tags: dict[str, str],
    *,
    within: tuple[str, ...] = (),
    bucket_name: str | None = None,  # None: Pulumi generates a unique name from `name`
    bucket_prefix: str | None = None,  # generated names start with this (e.g. "sagemaker-")
    kms_key_arn: str | None = None,  # None: SSE-S3 (AES256)
    retain_on_delete: bool = False,  # model buckets: kept when the stack is destroyed
    protect: bool = False,
    force_destroy: bool = False,
    # More statements of the bucket's one policy (a log delivery service's write access).
    policy_statements: tuple[dict, ...] = (),
    # Objects (and their noncurrent versions) expire after this many days; None: kept.
    expire_days: int | None = None,
) -> BucketSpec:
    """The bucket `{name}-bucket` and its guards, inside components `within` (outermost first)."""
    parents = (*within, SECURE_BUCKET)
    props: dict = {"forceDestroy": force_destroy, "tags": {**tags, "Name": name}}
    if bucket_name:
        props["bucket"] = bucket_name
    elif bucket_prefix:
        props["bucketPrefix"] = bucket_prefix
    bucket = Desired(BUCKET_TYPE, f"{name}-bucket", parents, props, autoname="bucket")
    of_bucket = ref(bucket.name, "bucket")
    arn = ref(bucket.name, "arn")
    by_default = (
        {"sseAlgorithm": "aws:kms", "kmsMasterKeyId": kms_key_arn}
        if kms_key_arn
        else {"sseAlgorithm": "AES256"}
    )
    guards = (
        Desired(
            BUCKET_PUBLIC_ACCESS_BLOCK_TYPE,
            f"{name}-public-access-block",
            parents,
            {
                "bucket": of_bucket,
                "blockPublicAcls": True,
                "blockPublicPolicy": True,
                "ignorePublicAcls": True,
                "restrictPublicBuckets": True,
            },
        ),
        Desired(
            BUCKET_OWNERSHIP_TYPE,
            f"{name}-ownership",
            parents,
            {"bucket": of_bucket, "rule": {"objectOwnership": "BucketOwnerEnforced"}},  # no ACLs
        ),
        Desired(
            BUCKET_ENCRYPTION_TYPE,
            f"{name}-encryption",
            parents,
            {
                "bucket": of_bucket,
                "rules": [
                    {"applyServerSideEncryptionByDefault": by_default, "bucketKeyEnabled": True}
                ],
            },
        ),
        Desired(
            BUCKET_VERSIONING_TYPE,
            f"{name}-versioning",
            parents,
            {"bucket": of_bucket, "versioningConfiguration": {"status": "Enabled"}},
        ),
        Desired(
            BUCKET_POLICY_TYPE,
            f"{name}-tls-only",
            parents,
            {
                "bucket": of_bucket,
                "policy": document_text(
                    {
                        "Sid": "DenyInsecureTransport",
                        "Effect": "Deny",
                        "Principal": "*",
                        "Action": "s3:*",
                        "Resource": [arn, f"{arn}/*"],
                        "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                    },
                    *policy_statements,
                ),
            },
        ),
    )
    if expire_days is not None:
        guards += (
            Desired(
                BUCKET_LIFECYCLE_TYPE,
                f"{name}-lifecycle",
                parents,
                {
                    "bucket": of_bucket,
                    "rules": [
                        {
                            "id": "expire",
                            "status": "Enabled",
                            "filter": {"prefix": ""},  # every object
                            "expiration": {"days": expire_days},
                            "noncurrentVersionExpiration": {"noncurrentDays": expire_days},
                            "abortIncompleteMultipartUpload": {"daysAfterInitiation": 1},
                        }
                    ],
                },
            ),
        )
    return BucketSpec(name, parents, bucket, guards, retain_on_delete, protect)
