"""HyperPod lifecycle scripts: where they live (their own private bucket) and how they are named."""

from __future__ import annotations

from pathlib import Path

from core.vocabulary import LIFECYCLE_SCRIPTS
from specs.buckets import BucketSpec, secure_bucket

SCRIPTS_DIR = Path(__file__).resolve().parents[1] / "infra" / "lifecycle_scripts"
ON_CREATE = "on_create.sh"
KEY_PREFIX = "lifecycle"


def scripts_bucket(name: str, tags: dict[str, str]) -> BucketSpec:
    # The "sagemaker-" name prefix: AmazonSageMakerClusterInstanceRolePolicy grants read of
    # such buckets; the execution role also gets an explicit, bucket-scoped grant.
    return secure_bucket(
        f"{name}-scripts",
        tags,
        within=(LIFECYCLE_SCRIPTS,),
        bucket_prefix="sagemaker-",
        force_destroy=True,
    )


def source_s3_uri(bucket: BucketSpec) -> str:
    return f"s3://{bucket.bucket_name}/{KEY_PREFIX}/"
