"""The HyperPod Inference Operator, installed as the `amazon-sagemaker-hyperpod-inference` EKS
add-on after the four add-ons its manager checks for (S3 and FSx CSI drivers, metrics-server,
cert-manager), with the IAM roles its service accounts assume (IRSA).

Service-account names are those of the add-on install; the Helm chart names the operator's
differently (`hyperpod-inference-operator-controller-manager`), and the trust must match the
install method exactly (field-problems.md row 7).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from core.versions import ALB_CONTROLLER_POLICY, OPERATOR_DEPENDENCY_ADDONS
from infra.bucket import SecureBucket, SecureBucketArgs
from infra.charts import resolve_file
from infra.iam import (
    allow,
    document,
    irsa_statement,
    irsa_trust,
    managed_policy,
    service_statement,
)

ADDON_NAME = "amazon-sagemaker-hyperpod-inference"
NAMESPACE = "hyperpod-inference-system"
OPERATOR_SA = "hyperpod-inference-controller-manager"  # add-on install (Helm: ...-operator-...)
ALB_SA = "aws-load-balancer-controller"
KEDA_SA = "keda-operator"
S3_CSI_SA = ("kube-system", "s3-csi-driver-sa")
FSX_CSI_SA = ("kube-system", "fsx-csi-controller-sa")
# The chart refuses an execution role whose name lacks this prefix when installed as add-on.
EXECUTION_ROLE_PREFIX = "SageMakerHyperPodInference"


@dataclass(frozen=True)
class InferenceOperatorArgs:
    cluster_name: pulumi.Input[str]
    oidc_provider_arn: pulumi.Input[str]
    oidc_issuer_url: pulumi.Input[str]
    hyperpod_cluster_arn: pulumi.Input[str]
    model_bucket_arn: pulumi.Input[str]
    model_prefix: str
    addon_version: str
    region: str
    account_id: pulumi.Input[str]
    stack: str
    partition: str = "aws"
    amp_workspace_arn: pulumi.Input[str] | None = None
    tags: dict[str, str] = field(default_factory=dict)
    # The HyperPod cluster: the operator's pods need the system nodes.
    depends_on: list[pulumi.Resource] = field(default_factory=list)


class InferenceOperator(pulumi.ComponentResource):
    addon: aws.eks.Addon

    def __init__(
        self, name: str, args: InferenceOperatorArgs, opts: pulumi.ResourceOptions | None = None
    ):
        super().__init__("hyperpod-dpd:infra:InferenceOperator", name, None, opts)
        self._name, self._args = name, args
        self.dependency_addons = self._create_dependency_addons()
        # The operator writes the endpoints' TLS certificates here; the "hyperpod-tls-" prefix
        # is what AmazonSageMakerHyperPodInferenceAccess grants S3 access to.
        self.tls_bucket = SecureBucket(
            f"{name}-tls",
            SecureBucketArgs(bucket_prefix="hyperpod-tls-", tags=args.tags, force_destroy=True),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.execution_role = self._create_execution_role()
        self.alb_role = self._create_alb_role()
        self.keda_role = self._create_keda_role()
        self.configuration = operator_configuration(
            execution_role_arn=self.execution_role.arn,
            tls_bucket=self.tls_bucket.name,
            hyperpod_cluster_arn=args.hyperpod_cluster_arn,
            alb_role_arn=self.alb_role.arn,
            keda_role_arn=self.keda_role.arn,
        )
        self.addon = aws.eks.Addon(
            f"{name}-addon",
            cluster_name=args.cluster_name,
            addon_name=ADDON_NAME,
            addon_version=args.addon_version,
            configuration_values=self.configuration,
            resolve_conflicts_on_create="OVERWRITE",
            resolve_conflicts_on_update="PRESERVE",
            tags=args.tags,
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=[*self.dependency_addons.values(), *args.depends_on, *self._grants],
                # Creation can exceed 40 minutes on p5 clusters (field-problems.md row 17).
                custom_timeouts=pulumi.CustomTimeouts(create="90m", update="90m", delete="40m"),
            ),
        )
        self.register_outputs(
            {"addonVersion": args.addon_version, "executionRoleArn": self.execution_role.arn}
        )

    def _opts(self, **kwargs) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(parent=self, **kwargs)

    def _irsa_role(self, key: str, namespace: str, sa: str, **kwargs) -> aws.iam.Role:
        a = self._args
        return aws.iam.Role(
            f"{self._name}-{key}-role",
            assume_role_policy=irsa_trust(a.oidc_provider_arn, a.oidc_issuer_url, namespace, sa),
            tags=a.tags,
            opts=self._opts(),
            **kwargs,
        )

    def _inline(self, key: str, role: aws.iam.Role, *statements) -> aws.iam.RolePolicy:
        policy = aws.iam.RolePolicy(
            f"{self._name}-{key}-policy",
            role=role.id,
            policy=document(*statements),
            opts=self._opts(),
        )
        self._grants.append(policy)
        return policy

    def _attach(self, key: str, role: aws.iam.Role, policy_arn: pulumi.Input[str]) -> None:
        self._grants.append(
            aws.iam.RolePolicyAttachment(
                f"{self._name}-{key}-attachment",
                role=role.name,
                policy_arn=policy_arn,
                opts=self._opts(),
            )
        )

    def _model_read(self) -> list[dict]:
        a = self._args
        prefix = a.model_prefix.strip("/")
        return [
            {
                **allow(["s3:ListBucket"], [a.model_bucket_arn], "ListModelPrefix"),
                "Condition": {"StringLike": {"s3:prefix": [prefix, f"{prefix}/*"]}},
            },
            allow(
                ["s3:GetObject"],
                [pulumi.Output.concat(a.model_bucket_arn, f"/{prefix}/*")],
                "ReadModelPrefix",
            ),
        ]

    def _create_dependency_addons(self) -> dict[str, aws.eks.Addon]:
        a = self._args
        self._grants: list[pulumi.Resource] = []
        s3_role = self._irsa_role("s3-csi", *S3_CSI_SA)
        self._inline("s3-csi", s3_role, *self._model_read())  # read-only mounts of the model
        fsx_role = self._irsa_role("fsx-csi", *FSX_CSI_SA)
        # No FSx file system is used: the driver only has to run (the operator checks for it).
        self._attach(
            "fsx-csi-readonly", fsx_role, managed_policy(a.partition, "AmazonFSxReadOnlyAccess")
        )
        roles = {"aws-mountpoint-s3-csi-driver": s3_role, "aws-fsx-csi-driver": fsx_role}
        addons = {}
        for addon, version in OPERATOR_DEPENDENCY_ADDONS.items():
            role = roles.get(addon)
            addons[addon] = aws.eks.Addon(
                f"{self._name}-{addon}",
                cluster_name=a.cluster_name,
                addon_name=addon,
                addon_version=version,
                service_account_role_arn=role.arn if role else None,
                resolve_conflicts_on_create="OVERWRITE",
                resolve_conflicts_on_update="PRESERVE",
                tags=a.tags,
                opts=self._opts(depends_on=[*a.depends_on, *self._grants]),
            )
        return addons

    def _create_execution_role(self) -> aws.iam.Role:
        a = self._args
        issuer_trust = irsa_statement(
            a.oidc_provider_arn, a.oidc_issuer_url, NAMESPACE, OPERATOR_SA
        )
        role = aws.iam.Role(
            f"{self._name}-execution-role",
            name_prefix=f"{EXECUTION_ROLE_PREFIX}-{a.stack}-"[:38],
            assume_role_policy=document(service_statement("sagemaker.amazonaws.com"), issuer_trust),
            tags=a.tags,
            opts=self._opts(),
        )
        self._attach(
            "execution-access",
            role,
            managed_policy(a.partition, "AmazonSageMakerHyperPodInferenceAccess"),
        )
        certificates = f"arn:{a.partition}:acm:{a.region}:"
        self._inline(
            "execution",
            role,
            # Release notes 3.0/3.1: the operator tags and reads the certificates it imports.
            allow(
                ["acm:AddTagsToCertificate", "acm:DescribeCertificate", "acm:GetCertificate"],
                [pulumi.Output.concat(certificates, a.account_id, ":certificate/*")],
                "EndpointCertificates",
            ),
            allow(
                ["s3:PutObjectTagging"],
                [pulumi.Output.concat(self.tls_bucket.arn, "/*")],
                "TagCertificateObjects",
            ),
            *self._model_read(),
        )
        return role

    def _create_alb_role(self) -> aws.iam.Role:
        role = self._irsa_role("alb", NAMESPACE, ALB_SA)
        # The AWS Load Balancer Controller's own policy, fetched at deploy time from the pinned
        # upstream release (core/versions.py): many of its EC2/ELB actions support no resource
        # scoping and use "*" with tag conditions, as AWS publishes it.
        policy = aws.iam.Policy(
            f"{self._name}-alb-controller",
            description="AWS Load Balancer Controller "
            f"{ALB_CONTROLLER_POLICY.ref} (hyperpod-dpd inference operator)",
            policy=resolve_file(ALB_CONTROLLER_POLICY),
            tags=self._args.tags,
            opts=self._opts(),
        )
        self._attach("alb-controller", role, policy.arn)
        return role

    def _create_keda_role(self) -> aws.iam.Role:
        a = self._args
        role = self._irsa_role("keda", NAMESPACE, KEDA_SA)
        workspaces = a.amp_workspace_arn or pulumi.Output.concat(
            f"arn:{a.partition}:aps:{a.region}:", a.account_id, ":workspace/*"
        )
        self._inline(
            "keda",
            role,
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
        return role


def operator_configuration(
    execution_role_arn: pulumi.Input[str],
    tls_bucket: pulumi.Input[str],
    hyperpod_cluster_arn: pulumi.Input[str],
    alb_role_arn: pulumi.Input[str],
    keda_role_arn: pulumi.Input[str],
) -> pulumi.Output[str]:
    """The add-on's --configuration-values (keys from the AWS setup docs and helm_to_addon.sh)."""
    return pulumi.Output.json_dumps(
        {
            "executionRoleArn": execution_role_arn,
            "tlsCertificateS3Bucket": tls_bucket,
            "hyperpodClusterArn": hyperpod_cluster_arn,
            "alb": {"enabled": True, "serviceAccount": {"create": True, "roleArn": alb_role_arn}},
            # The add-on reads keda.auth.aws.irsa (the Helm chart: keda.podIdentity.aws.irsa).
            "keda": {
                "enabled": True,
                "auth": {"aws": {"irsa": {"enabled": True, "roleArn": keda_role_arn}}},
            },
        }
    )
