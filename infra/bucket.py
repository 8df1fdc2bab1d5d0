"""A private, encrypted, versioned S3 bucket that refuses plain-HTTP requests, registered from
its spec (specs/buckets.py): the bucket and its guards."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from core.vocabulary import (
    BUCKET_ENCRYPTION_TYPE,
    BUCKET_LIFECYCLE_TYPE,
    BUCKET_OWNERSHIP_TYPE,
    BUCKET_POLICY_TYPE,
    BUCKET_PUBLIC_ACCESS_BLOCK_TYPE,
    BUCKET_VERSIONING_TYPE,
    SECURE_BUCKET,
)
from program.outputs import Outputs
from specs.buckets import BucketSpec

_GUARDS = {
    BUCKET_PUBLIC_ACCESS_BLOCK_TYPE: aws.s3.BucketPublicAccessBlock,
    BUCKET_OWNERSHIP_TYPE: aws.s3.BucketOwnershipControls,
    BUCKET_ENCRYPTION_TYPE: aws.s3.BucketServerSideEncryptionConfiguration,
    BUCKET_VERSIONING_TYPE: aws.s3.BucketVersioning,
    BUCKET_POLICY_TYPE: aws.s3.BucketPolicy,
    BUCKET_LIFECYCLE_TYPE: aws.s3.BucketLifecycleConfiguration,
}


@dataclass(frozen=True)
class SecureBucketArgs:
    spec: BucketSpec
    outputs: Outputs  # publishes `{name}-bucket.bucket` and `.arn`


class SecureBucket(pulumi.ComponentResource):
    bucket: aws.s3.Bucket
    arn: pulumi.Output[str]
    name: pulumi.Output[str]

    def __init__(
        self, name: str, args: SecureBucketArgs, opts: pulumi.ResourceOptions | None = None
    ):
        super().__init__(SECURE_BUCKET, name, None, opts)
        spec, out = args.spec, args.outputs
        self.bucket = aws.s3.Bucket(
            spec.bucket.name,
            **out.resolve(spec.bucket.kwargs()),
            opts=pulumi.ResourceOptions(
                parent=self, retain_on_delete=spec.retain_on_delete, protect=spec.protect
            ),
        )
        self.arn, self.name = self.bucket.arn, self.bucket.bucket
        out.publish(spec.bucket.name, bucket=self.name, arn=self.arn)
        # A retained bucket keeps its guards: without them `pulumi destroy` would leave it
        # unencrypted by default, without the TLS-only policy and open to public ACLs.
        guard_opts = pulumi.ResourceOptions(parent=self, retain_on_delete=spec.retain_on_delete)
        self.guards = {
            guard.type: _GUARDS[guard.type](
                guard.name, **out.resolve(guard.kwargs()), opts=guard_opts
            )
            for guard in spec.guards
        }
        self.policy = self.guards[BUCKET_POLICY_TYPE]
        self.register_outputs({"arn": self.arn, "name": self.name})
