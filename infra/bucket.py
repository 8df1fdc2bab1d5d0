"""A private, encrypted, versioned S3 bucket that refuses plain-HTTP requests.

Used for the lifecycle scripts, the model checkpoints and the operator's TLS certificates:
every bucket of the stack gets the same guarantees from one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from infra.iam import document


@dataclass(frozen=True)
class SecureBucketArgs:
    bucket_name: str | None = None  # None: Pulumi generates a unique name from the resource name
    bucket_prefix: str | None = None  # generated names start with this (e.g. "sagemaker-")
    kms_key_arn: pulumi.Input[str] | None = None  # None: SSE-S3 (AES256)
    retain_on_delete: bool = False  # prod model buckets: never deleted with the stack
    force_destroy: bool = False
    tags: dict[str, str] = field(default_factory=dict)


class SecureBucket(pulumi.ComponentResource):
    bucket: aws.s3.Bucket
    arn: pulumi.Output[str]
    name: pulumi.Output[str]

    def __init__(
        self, name: str, args: SecureBucketArgs, opts: pulumi.ResourceOptions | None = None
    ):
        super().__init__("hyperpod-dpd:infra:SecureBucket", name, None, opts)
        self._name = name
        self.bucket = aws.s3.Bucket(
            f"{name}-bucket",
            bucket=args.bucket_name,
            bucket_prefix=args.bucket_prefix if not args.bucket_name else None,
            force_destroy=args.force_destroy,
            tags={**args.tags, "Name": name},
            opts=pulumi.ResourceOptions(parent=self, retain_on_delete=args.retain_on_delete),
        )
        self.arn, self.name = self.bucket.arn, self.bucket.bucket
        self._create_guards(args)
        self.register_outputs({"arn": self.arn, "name": self.name})

    def _create_guards(self, args: SecureBucketArgs) -> None:
        opts = pulumi.ResourceOptions(parent=self)
        aws.s3.BucketPublicAccessBlock(
            f"{self._name}-public-access-block",
            bucket=self.bucket.id,
            block_public_acls=True,
            block_public_policy=True,
            ignore_public_acls=True,
            restrict_public_buckets=True,
            opts=opts,
        )
        aws.s3.BucketOwnershipControls(
            f"{self._name}-ownership",
            bucket=self.bucket.id,
            rule={"object_ownership": "BucketOwnerEnforced"},  # ACLs off
            opts=opts,
        )
        by_default = (
            {"sse_algorithm": "aws:kms", "kms_master_key_id": args.kms_key_arn}
            if args.kms_key_arn
            else {"sse_algorithm": "AES256"}
        )
        aws.s3.BucketServerSideEncryptionConfiguration(
            f"{self._name}-encryption",
            bucket=self.bucket.id,
            rules=[
                {"apply_server_side_encryption_by_default": by_default, "bucket_key_enabled": True}
            ],
            opts=opts,
        )
        aws.s3.BucketVersioning(
            f"{self._name}-versioning",
            bucket=self.bucket.id,
            versioning_configuration={"status": "Enabled"},
            opts=opts,
        )
        aws.s3.BucketPolicy(
            f"{self._name}-tls-only",
            bucket=self.bucket.id,
            policy=document(
                {
                    "Sid": "DenyInsecureTransport",
                    "Effect": "Deny",
                    "Principal": "*",
                    "Action": "s3:*",
                    "Resource": [self.bucket.arn, pulumi.Output.concat(self.bucket.arn, "/*")],
                    "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                }
            ),
            opts=opts,
        )
