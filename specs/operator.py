"""What the inference operator's install is given: its TLS bucket, the inline policies of the
roles its service accounts assume, and the AWS Load Balancer Controller's policy, narrowed
(specs/alb_controller/); the rules judge these before they exist."""

from __future__ import annotations

from dataclasses import dataclass

from core.refs import ref
from core.versions import ALB_CONTROLLER_POLICY
from core.vocabulary import IAM_POLICY_TYPE, INFERENCE_OPERATOR, PROJECT_TAG, STACK_TAG
from specs.alb_controller.narrowing import Scope, document_text, moved
from specs.alb_controller.scheme import INTERNAL_ONLY
from specs.alb_controller.upstream import upstream_policy
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
    alb_controller_policy: Desired  # a managed policy, attached to the controller's role
    # Its target registration, narrowed to its own and the split's target groups: the role's
    # inline policy (the managed one has no room left; specs/alb_controller/narrowing.py MOVED).
    alb_controller_targets: Desired
    # An inline policy of the same role: no internet-facing load balancer (scheme.py).
    alb_internal_only: Desired


def operator(
    name: str,
    model_bucket_arn: str,
    model_prefixes: tuple[str, ...],
    account_id: str,
    amp_workspace_arn: str | None,
    region: str,
    partition: str,
    tags: dict[str, str],
    vpc_arn: str,
) -> OperatorSpec:
    """`model_bucket_arn`, `account_id`, `amp_workspace_arn` and `vpc_arn` (the stack's VPC,
    where the load balancer controller works) are placeholders."""
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
    scope = Scope(partition, vpc_arn, tuple((k, tags[k]) for k in (PROJECT_TAG, STACK_TAG)))
    alb = Desired(
        IAM_POLICY_TYPE,
        f"{name}-alb-controller",
        parents,
        {
            # IAM never changes a policy's description: a new one would replace the policy, so
            # it still says what it said when the program read the file at deploy time.
            "description": f"AWS Load Balancer Controller {ALB_CONTROLLER_POLICY.ref} "
            "(hyperpod-dpd inference operator)",
            "policy": document_text(upstream_policy(), scope),
            "tags": tags,
        },
        autoname="name",
    )
    targets = role_policy(
        f"{name}-alb-controller-targets",
        parents,
        ref(f"{name}-alb-role", "id"),
        *moved(upstream_policy(), scope)["Statement"],
    )
    internal_only = role_policy(
        f"{name}-alb-internal-only", parents, ref(f"{name}-alb-role", "id"), INTERNAL_ONLY
    )
    return OperatorSpec(name, tls, s3_csi, execution, keda, alb, targets, internal_only)
