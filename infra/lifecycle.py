"""HyperPod lifecycle scripts, uploaded by Pulumi into their own private encrypted bucket."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from core.vocabulary import LIFECYCLE_SCRIPTS
from infra.bucket import SecureBucket, SecureBucketArgs
from program.outputs import Outputs
from specs.buckets import BucketSpec
from specs.lifecycle import (
    KEY_PREFIX,
    ON_CREATE,
    ON_CREATE_KEY,
    SCRIPTS_DIR,
    on_create_md5,
    on_create_sha256,
)


@dataclass(frozen=True)
class LifecycleScriptsArgs:
    bucket: BucketSpec  # specs/lifecycle.py
    outputs: Outputs
    tags: dict[str, str] = field(default_factory=dict)


class LifecycleScripts(pulumi.ComponentResource):
    bucket: SecureBucket
    source_s3_uri: pulumi.Output[str]
    on_create: str = ON_CREATE
    sha256: str  # of the uploaded on_create.sh (the stack output lifecycleScriptSha256)
    # The S3 version `pulumi up` wrote (the stack output lifecycleScriptVersionId): a newer one
    # means someone wrote the script since, even if they put the original back afterwards.
    version_id: pulumi.Output[str]

    def __init__(
        self, name: str, args: LifecycleScriptsArgs, opts: pulumi.ResourceOptions | None = None
    ):
        super().__init__(LIFECYCLE_SCRIPTS, name, None, opts)
        self.bucket = SecureBucket(
            args.bucket.name,
            SecureBucketArgs(args.bucket, args.outputs),
            opts=pulumi.ResourceOptions(parent=self),
        )
        script = aws.s3.BucketObjectv2(
            f"{name}-{ON_CREATE.replace('_', '-').replace('.', '-')}",
            bucket=self.bucket.name,
            key=ON_CREATE_KEY,
            source=pulumi.FileAsset(str(SCRIPTS_DIR / ON_CREATE)),
            content_type="text/x-shellscript",
            checksum_algorithm="SHA256",
            # The object's ETag when it is this file (specs/lifecycle.py on_create_md5): a
            # `pulumi up --refresh` after someone replaced it sees another ETag and uploads the
            # stack's script again.
            etag=on_create_md5(),
            # After the bucket policy: a new deployer writes itself into the policy first.
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.bucket.policy]),
        )
        self.sha256 = on_create_sha256()
        self.version_id = script.version_id
        self.source_s3_uri = pulumi.Output.concat("s3://", self.bucket.name, f"/{KEY_PREFIX}/")
        self.objects = [script]
        self.register_outputs({"sourceS3Uri": self.source_s3_uri})
