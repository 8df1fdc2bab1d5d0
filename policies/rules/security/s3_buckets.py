"""hyperpod-dpd-s3-buckets: every bucket blocks public access, is encrypted, and refuses plain
HTTP (a Deny on aws:SecureTransport false)."""

from __future__ import annotations

import json

from policies.rules import views
from policies.rules.base import Finding, Rule

BUCKET = "aws:s3/bucket:Bucket"
PUBLIC_BLOCK = "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock"
ENCRYPTION = (
    "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"
)
POLICY = "aws:s3/bucketPolicy:BucketPolicy"
BLOCK_KEYS = ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets")


def _by_bucket(resources, type_):
    return {r.props.get("bucket"): r for r in views.of_type(resources, type_)}


def _tls_only(policy_text) -> bool:
    try:
        statements = json.loads(policy_text).get("Statement", [])
    except (TypeError, ValueError):
        return False
    return any(
        s.get("Effect") == "Deny"
        and (s.get("Condition") or {}).get("Bool", {}).get("aws:SecureTransport")
        in ("false", False)
        for s in statements
    )


def check(resources, limits):
    blocks, encryption = _by_bucket(resources, PUBLIC_BLOCK), _by_bucket(resources, ENCRYPTION)
    policies = _by_bucket(resources, POLICY)
    for bucket in views.of_type(resources, BUCKET):
        name = bucket.props.get("bucket") or bucket.props.get("id")
        if not views.known(name):
            yield views.unchecked(bucket.urn, f"the name of bucket resource {bucket.name}")
            continue
        block = blocks.get(name)
        if block is None or not all(block.props.get(k) is True for k in BLOCK_KEYS):
            yield Finding(bucket.urn, f"bucket {name} does not block all public access")
        if name not in encryption and not bucket.props.get("serverSideEncryptionConfiguration"):
            yield Finding(bucket.urn, f"bucket {name} has no default encryption")
        policy = policies.get(name)
        if policy is not None and views.unknown(policy.props.get("policy")):
            yield views.unchecked(bucket.urn, f"the bucket policy of {name} (it names the ARN)")
        elif policy is None or not _tls_only(policy.props.get("policy")):
            yield Finding(bucket.urn, f"bucket {name} does not deny requests without TLS")


RULE = Rule(
    "hyperpod-dpd-s3-buckets", "S3 buckets private, encrypted, TLS-only", "mandatory", check
)
