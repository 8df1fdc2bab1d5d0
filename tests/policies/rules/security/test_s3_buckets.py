"""hyperpod-dpd-s3-buckets (policies/rules/security/s3_buckets.py): a bucket without its public
access block, default encryption and TLS-only policy."""

from __future__ import annotations

from tests.policies.conftest import named
from tests.policies.rules.helpers import findings


def test_bucket_without_public_block_encryption_or_tls(dev):
    bucket = named(dev, "models-bucket")
    name = bucket.props["bucket"]
    for suffix in ("public-access-block", "encryption", "tls-only"):
        dev.remove(named(dev, f"models-{suffix}"))
    assert [m for _, m in findings("hyperpod-dpd-s3-buckets", dev)] == [
        f"bucket {name} does not block all public access",
        f"bucket {name} has no default encryption",
        f"bucket {name} does not deny requests without TLS",
    ]
