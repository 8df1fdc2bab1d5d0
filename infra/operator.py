"""The HyperPod Inference Operator, installed as the `amazon-sagemaker-hyperpod-inference` EKS
add-on after the four add-ons its manager checks for (S3 and FSx CSI drivers, metrics-server,
cert-manager), with the IAM roles its service accounts assume (IRSA).

Service-account names are those of the add-on install; the Helm chart names the operator's
differently (`hyperpod-inference-operator-controller-manager`), and the trust must match the
install method exactly (aws/sagemaker-hyperpod-cli, the chart's
`config/rbac/service_account.yaml` and `migration/helm_to_addon.sh`, which renames it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from core.versions import OPERATOR_DEPENDENCY_ADDONS
from core.vocabulary import (
    INFERENCE_OPERATOR,
    OPERATOR_NAMESPACE,
    OPERATOR_SERVICE_ACCOUNT,
    SYSTEM_NAMESPACE,
)
from infra.bucket import SecureBucket, SecureBucketArgs
from infra.iam import (
    document,
    inline_policy,
    irsa_statement,
    irsa_trust,
    role_with_policies,
    sagemaker_source_arn,
    source_scoped,
)
from program.outputs import Outputs
from specs.iam import managed_policy, service_statement
from specs.operator import OperatorSpec

ADDON_NAME = "amazon-sagemaker-hyperpod-inference"
NAMESPACE = OPERATOR_NAMESPACE
OPERATOR_SA = OPERATOR_SERVICE_ACCOUNT  # add-on install (Helm: ...-operator-...)
ALB_SA = "aws-load-balancer-controller"
KEDA_SA = "keda-operator"
S3_CSI_SA = (SYSTEM_NAMESPACE, "s3-csi-driver-sa")
FSX_CSI_SA = (SYSTEM_NAMESPACE, "fsx-csi-controller-sa")
# The chart refuses an execution role whose name lacks this prefix when installed as add-on.
EXECUTION_ROLE_PREFIX = "SageMakerHyperPodInference"


@dataclass(frozen=True)
class InferenceOperatorArgs:
    spec: OperatorSpec  # specs/operator.py: the TLS bucket, the inline and the ALB policies
    outputs: Outputs  # resolves the model bucket, account, AMP and VPC ARNs
    cluster_name: pulumi.Input[str]
    oidc_provider_arn: pulumi.Input[str]
    oidc_issuer_url: pulumi.Input[str]
    hyperpod_cluster_arn: pulumi.Input[str]
    addon_version: str
    stack: str
    partition: str = "aws"
    region: str = "us-east-1"
    # The account: SageMaker may assume the execution role for its resources only.
    account_id: pulumi.Input[str] | None = None
    tags: dict[str, str] = field(default_factory=dict)
    # The HyperPod cluster: the operator's pods need the system nodes.
    depends_on: list[pulumi.Resource] = field(default_factory=list)


class InferenceOperator(pulumi.ComponentResource):
    addon: aws.eks.Addon

    def __init__(
        self, name: str, args: InferenceOperatorArgs, opts: pulumi.ResourceOptions | None = None
    ):
        super().__init__(INFERENCE_OPERATOR, name, None, opts)
        self._name, self._args = name, args
        self._grants: list[pulumi.Resource] = []
        self.dependency_addons = self._create_dependency_addons()
        self.tls_bucket = SecureBucket(
            args.spec.tls_bucket.name,
            SecureBucketArgs(args.spec.tls_bucket, args.outputs),
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
                # Creation can exceed 40 minutes on p5 clusters, past common IaC defaults (as
                # public Terraform setups of this add-on report).
                custom_timeouts=pulumi.CustomTimeouts(create="90m", update="90m", delete="40m"),
            ),
        )
        self.register_outputs(
            {"addonVersion": args.addon_version, "executionRoleArn": self.execution_role.arn}
        )

    def _opts(self, **kwargs) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(parent=self, **kwargs)

    def _role(
        self,
        key: str,
        trust: pulumi.Input[str],
        managed: dict[str, pulumi.Input[str]] | None = None,
        **role_args: object,
    ) -> aws.iam.Role:
        """The role `{name}-{key}-role`; `managed`: attachment key -> policy ARN."""
        made = role_with_policies(
            f"{self._name}-{key}-role",
            trust,
            {f"{self._name}-{k}-attachment": arn for k, arn in (managed or {}).items()},
            parent=self,
            tags=self._args.tags,
            **role_args,
        )
        self._grants += made.grants
        self._args.outputs.publish(f"{self._name}-{key}-role", id=made.role.id)
        return made.role

    def _irsa_role(self, key: str, namespace: str, sa: str, **managed) -> aws.iam.Role:
        a = self._args
        trust = irsa_trust(a.oidc_provider_arn, a.oidc_issuer_url, namespace, sa)
        return self._role(key, trust, managed)

    def _inline(self, spec) -> None:
        self._grants.append(inline_policy(spec, self._args.outputs, self))

    def _create_dependency_addons(self) -> dict[str, aws.eks.Addon]:
        a = self._args
        s3_role = self._irsa_role("s3-csi", *S3_CSI_SA)
        self._inline(a.spec.s3_csi_policy)  # read-only mounts of the model
        # No FSx file system is used: the driver only has to run (the operator checks for it).
        fsx_role = self._irsa_role(
            "fsx-csi",
            *FSX_CSI_SA,
            **{"fsx-csi-readonly": managed_policy(a.partition, "AmazonFSxReadOnlyAccess")},
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
        role = self._role(
            "execution",
            document(
                # SageMaker on behalf of this account's resources in the stack's Region only
                # (https://docs.aws.amazon.com/sagemaker/latest/dg/security-confused-deputy-prevention.html).
                source_scoped(
                    service_statement("sagemaker.amazonaws.com"),
                    a.account_id,
                    None
                    if a.account_id is None
                    else sagemaker_source_arn(a.partition, a.region, a.account_id, "*"),
                ),
                issuer_trust,
            ),
            {
                "execution-access": managed_policy(
                    a.partition, "AmazonSageMakerHyperPodInferenceAccess"
                )
            },
            name_prefix=f"{EXECUTION_ROLE_PREFIX}-{a.stack}-"[:38],
        )
        self._inline(a.spec.execution_policy)
        return role

    def _create_alb_role(self) -> aws.iam.Role:
        role = self._irsa_role("alb", NAMESPACE, ALB_SA)
        # The AWS Load Balancer Controller's own policy, vendored from the pinned upstream
        # release and narrowed to the controller's own resources and the stack's VPC
        # (specs/alb_controller/): many of its EC2/ELB actions support no resource scoping and
        # use "*" with tag conditions, as upstream publishes them.
        spec = self._args.spec.alb_controller_policy
        policy = aws.iam.Policy(
            spec.name, **self._args.outputs.resolve(spec.kwargs()), opts=self._opts()
        )
        self._grants.append(
            aws.iam.RolePolicyAttachment(
                f"{self._name}-alb-controller-attachment",
                role=role.name,
                policy_arn=policy.arn,
                opts=self._opts(),
            )
        )
        self._inline(self._args.spec.alb_controller_targets)
        # No internet-facing load balancer, whatever an Ingress asks (specs/alb_controller/
        # scheme.py).
        self._inline(self._args.spec.alb_internal_only)
        return role

    def _create_keda_role(self) -> aws.iam.Role:
        role = self._irsa_role("keda", NAMESPACE, KEDA_SA)
        self._inline(self._args.spec.keda_policy)
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
