"""HyperPod lifecycle scripts: where they live (their own private bucket), how they are named,
who may change them, and the digests `pulumi up` records of what it uploads.

on_create.sh runs as root on every node HyperPod creates or recovers (nodeRecovery: Automatic):
whoever can overwrite it owns every node, its role and every pod's credentials. HyperPod
requires the bucket's name to start with "sagemaker-", and AWS-managed SageMaker policies grant
object writes on every bucket whose name holds "sagemaker" (AmazonSageMakerFeatureStoreAccess,
attached to SageMaker execution roles: s3:PutObject on arn:aws:s3:::*sagemaker*,
https://docs.aws.amazon.com/aws-managed-policy/latest/reference/AmazonSageMakerFeatureStoreAccess.html),
so the bucket's policy denies every change of its objects to all but the stack's deployers
(specs/buckets.py only_writers); HyperPod only reads them. `hyperpod-dpd preflight` and `verify`
compare the object in S3 with the SHA-256 the stack recorded (hyperpod_dpd/shared/boot_script.py).
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from core.refs import ref
from core.vocabulary import LIFECYCLE_SCRIPTS
from specs.buckets import BucketSpec, only_writers, secure_bucket

SCRIPTS_DIR = Path(__file__).resolve().parents[1] / "infra" / "lifecycle_scripts"
ON_CREATE = "on_create.sh"
KEY_PREFIX = "lifecycle"
ON_CREATE_KEY = f"{KEY_PREFIX}/{ON_CREATE}"


def scripts_bucket(
    name: str, tags: dict[str, str], deployers: tuple[str, ...], deployer: str
) -> BucketSpec:
    """`deployers`: hyperpod-dpd:deployerArns; `deployer`: a placeholder for the stack's deploy
    role (program/stack_config.py deploying_principal). Versioned (secure_bucket): an overwritten script's previous
    versions stay, and only the deployers may suspend versioning or expire them."""
    # The "sagemaker-" name prefix: AmazonSageMakerClusterInstanceRolePolicy grants read of
    # such buckets; the execution role also gets an explicit, bucket-scoped grant.
    bucket = f"{name}-scripts-bucket"  # secure_bucket names it so
    return secure_bucket(
        f"{name}-scripts",
        tags,
        within=(LIFECYCLE_SCRIPTS,),
        bucket_prefix="sagemaker-",
        force_destroy=True,
        policy_statements=(only_writers(ref(bucket, "arn"), deployers, deployer),),
    )


def source_s3_uri(bucket: BucketSpec) -> str:
    return f"s3://{bucket.bucket_name}/{KEY_PREFIX}/"


@functools.cache
def on_create_bytes() -> bytes:
    return (SCRIPTS_DIR / ON_CREATE).read_bytes()


def on_create_sha256() -> str:
    """Hex SHA-256 of the on_create.sh this checkout uploads: the stack output
    lifecycleScriptSha256, what preflight and verify compare the object in S3 with."""
    return hashlib.sha256(on_create_bytes()).hexdigest()


def on_create_md5() -> str:
    """Hex MD5 of on_create.sh: the object's ETag once uploaded (a single-part PUT to an SSE-S3
    bucket). Given as the object's `etag`, a refresh that reads another ETag (the object was
    replaced) makes the next `pulumi up` upload the stack's script again."""
    return hashlib.md5(on_create_bytes(), usedforsecurity=False).hexdigest()
