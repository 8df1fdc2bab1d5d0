"""What the inference operator's install is given: its TLS bucket and the inline policies of
the roles its service accounts assume (the wildcard rule judges these before they exist)."""

from __future__ import annotations

from dataclasses import dataclass

from core.refs import ref
from core.vocabulary import INFERENCE_OPERATOR
from specs.base import Desired
from specs.buckets import BucketSpec, secure_bucket
from specs.iam import allow, prefix_read, role_policy

# The operator writes the endpoints' TLS certificates here; the "hyperpod-tls-" prefix is what
# AmazonSageMakerHyperPodInferenceAccess grants S3 access to.
TLS_BUCKET_PREFIX = "hyperpod-tls-"


@dataclass(frozen=True)
class OperatorSpec:
    name: str
    tls_bucket: BucketSpec
    s3_csi_policy: Desired  # read-only mounts of the model prefix
    execution_policy: Desired
    keda_policy: Desired


def operator(
    name: str,
    model_bucket_arn: str,
    model_prefixes: tuple[str, ...],
    account_id: str,
    amp_workspace_arn: str | None,
    region: str,
    partition: str,
    tags: dict[str, str],
) -> OperatorSpec:
    """`model_bucket_arn`, `account_id` and `amp_workspace_arn` are placeholders."""
    parents = (INFERENCE_OPERATOR,)
    tls = secure_bucket(
        f"{name}-tls",
        tags,
        within=parents,
        bucket_prefix=TLS_BUCKET_PREFIX,
        force_destroy=True,
    )
    model_read = prefix_read(model_bucket_arn, model_prefixes)
    s3_csi = role_policy(
        f"{name}-s3-csi-policy", parents, ref(f"{name}-s3-csi-role", "id"), *model_read
    )
    execution = role_policy(
        f"{name}-execution-policy",
        parents,
        ref(f"{name}-execution-role", "id"),
        # Release notes 3.0/3.1: the operator tags and reads the certificates it imports.
        allow(
            ["acm:AddTagsToCertificate", "acm:DescribeCertificate", "acm:GetCertificate"],
            [f"arn:{partition}:acm:{region}:{account_id}:certificate/*"],
            "EndpointCertificates",
        ),
        allow(["s3:PutObjectTagging"], [f"{tls.arn}/*"], "TagCertificateObjects"),
        *model_read,
    )
    workspaces = amp_workspace_arn or f"arn:{partition}:aps:{region}:{account_id}:workspace/*"
    keda = role_policy(
        f"{name}-keda-policy",
        parents,
        ref(f"{name}-keda-role", "id"),
        # CloudWatch metric reads support no resource-level permissions: AWS requires "*".
        allow(
            [
                "cloudwatch:GetMetricData",
                "cloudwatch:GetMetricStatistics",
                "cloudwatch:ListMetrics",
            ],
            ["*"],
            "ReadMetricsForScaling",
        ),
        allow(
            ["aps:QueryMetrics", "aps:GetLabels", "aps:GetSeries", "aps:GetMetricMetadata"],
            [workspaces],
            "QueryPrometheus",
        ),
    )
    return OperatorSpec(name, tls, s3_csi, execution, keda)
