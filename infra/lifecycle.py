"""HyperPod lifecycle scripts, uploaded by Pulumi into their own private encrypted bucket."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pulumi
import pulumi_aws as aws

from infra.bucket import SecureBucket, SecureBucketArgs

SCRIPTS_DIR = Path(__file__).resolve().parent / "lifecycle_scripts"
ON_CREATE = "on_create.sh"
KEY_PREFIX = "lifecycle"


@dataclass(frozen=True)
class LifecycleScriptsArgs:
    tags: dict[str, str] = field(default_factory=dict)


class LifecycleScripts(pulumi.ComponentResource):
    bucket: SecureBucket
    source_s3_uri: pulumi.Output[str]
    on_create: str = ON_CREATE

    def __init__(
        self, name: str, args: LifecycleScriptsArgs, opts: pulumi.ResourceOptions | None = None
    ):
        super().__init__("hyperpod-dpd:infra:LifecycleScripts", name, None, opts)
        # The "sagemaker-" name prefix: AmazonSageMakerClusterInstanceRolePolicy grants read of
        # such buckets; the execution role also gets an explicit, bucket-scoped grant.
        self.bucket = SecureBucket(
            f"{name}-scripts",
            SecureBucketArgs(bucket_prefix="sagemaker-", tags=args.tags, force_destroy=True),
            opts=pulumi.ResourceOptions(parent=self),
        )
        script = aws.s3.BucketObjectv2(
            f"{name}-{ON_CREATE.replace('_', '-').replace('.', '-')}",
            bucket=self.bucket.name,
            key=f"{KEY_PREFIX}/{ON_CREATE}",
            source=pulumi.FileAsset(str(SCRIPTS_DIR / ON_CREATE)),
            content_type="text/x-shellscript",
            checksum_algorithm="SHA256",
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.source_s3_uri = pulumi.Output.concat("s3://", self.bucket.name, f"/{KEY_PREFIX}/")
        self.objects = [script]
        self.register_outputs({"sourceS3Uri": self.source_s3_uri})
