"""What the nodes boot with, checked against what the last `pulumi up` made: the script's
digest (boot_script.py), the script's S3 versions since (boot_versions.py) and the cluster's
lifecycle configuration and execution role (lifecycle_config.py). `hyperpod-dpd preflight` and
`verify --stack` report each as a check of its own, in this order."""

from __future__ import annotations

from hyperpod_dpd.shared import boot_script, boot_versions, lifecycle_config
from hyperpod_dpd.shared.aws import ClientFactory
from hyperpod_dpd.shared.boot_script import Deployed, Verdict


def verdicts(where: Deployed, client: ClientFactory) -> list[tuple[str, Verdict]]:
    """(check name, verdict) of each; no AWS client is made for what cannot be compared."""
    s3 = client("s3") if where.bucket else None
    sagemaker = client("sagemaker") if where.bucket and where.cluster_arn else None
    return [
        (boot_script.CHECK, boot_script.compare(s3, where)),
        (boot_versions.CHECK, boot_versions.history(s3, where)),
        (lifecycle_config.CHECK, lifecycle_config.compare(sagemaker, where)),
    ]
