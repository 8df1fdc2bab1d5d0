"""hyperpod-dpd: the Pulumi program. Loads the stack config once, then wires the components.

Config errors stop the program before any resource is registered, so a bad stack file never
leaves a half-created stack.
"""

import pulumi
import pulumi_aws as aws

from core.regions import partition_of
from core.vocabulary import GPU_ROLES, role_node_selector
from infra.bucket import SecureBucket, SecureBucketArgs
from infra.dependencies import HyperPodDependencies, HyperPodDependenciesArgs
from infra.efa import EfaSecurityGroup, EfaSecurityGroupArgs
from infra.eks import Eks, EksArgs
from infra.hyperpod import HyperPodArgs, HyperPodCluster
from infra.lifecycle import LifecycleScripts, LifecycleScriptsArgs
from infra.network import Network, NetworkArgs
from infra.observability import Observability, ObservabilityArgs
from infra.operator import InferenceOperator, InferenceOperatorArgs
from infra.placement import Placement, PlacementArgs
from infra.stack_config import load_stack_config
from infra.tags import base_tags
from specs.endpoint import ClusterFacts
from workloads.endpoint import EndpointArgs, InferenceEndpoint
from workloads.staging import CheckpointStaging, StagingArgs

config = load_stack_config()
s = config.settings
tags = base_tags(config.project, config.stack)
partition = partition_of(s.region)
cluster_name = f"{config.project}-{config.stack}"

network = Network(
    "network",
    NetworkArgs(
        vpc_cidr=s.network.vpc_cidr,
        gpu_az_id=s.availability_zone_id,
        control_plane_az_ids=list(s.network.control_plane_az_ids),
        nat_gateways=s.network.nat_gateways,
        region=s.region,
        tags=tags,
    ),
)
placement = Placement(
    "placement", PlacementArgs(s.availability_zone_id, s.network.placement_group, tags)
)
eks = Eks(
    "eks",
    EksArgs(
        cluster_name=cluster_name,
        kubernetes_version=s.eks.kubernetes_version,
        subnet_ids=network.private_subnet_ids,
        public_access_cidrs=list(s.eks.public_access_cidrs),
        admin_role_arns=list(s.eks.admin_role_arns),
        region=s.region,
        partition=partition,
        tags=tags,
    ),
)
efa = EfaSecurityGroup(
    "nodes",
    EfaSecurityGroupArgs(
        vpc_id=network.vpc_id,
        vpc_cidr=s.network.vpc_cidr,
        cluster_security_group_id=eks.cluster.vpc_config.cluster_security_group_id,
        tags=tags,
    ),
)
lifecycle = LifecycleScripts("lifecycle", LifecycleScriptsArgs(tags=tags))
models = SecureBucket(
    "models",
    SecureBucketArgs(
        bucket_name=s.checkpoint.bucket_name,
        retain_on_delete=s.checkpoint.retain_bucket_on_delete,
        tags=tags,
    ),
)
dependencies = HyperPodDependencies(
    "dependencies",
    HyperPodDependenciesArgs(provider=eks.provider, depends_on=list(eks.addons.values())),
)
hyperpod = HyperPodCluster(
    "hyperpod",
    HyperPodArgs(
        cluster_name=cluster_name,
        eks_cluster_arn=eks.cluster.arn,
        groups=dict(s.instance_groups),
        system_subnet_ids=network.private_subnet_ids,
        gpu_subnet_id=network.gpu_subnet_id,
        security_group_id=efa.id,
        lifecycle_source_s3_uri=lifecycle.source_s3_uri,
        lifecycle_on_create=lifecycle.on_create,
        lifecycle_bucket_arn=lifecycle.bucket.arn,
        model_bucket_arn=models.arn,
        model_prefix=s.checkpoint.effective_prefix,
        partition=partition,
        region=s.region,
        tags=tags,
        depends_on=[dependencies.release],
    ),
)
eks.create_node_addons(hyperpod.cluster)
account_id = aws.get_caller_identity_output().account_id
observability = None
if s.observability.enabled:
    observability = Observability(
        "observability",
        ObservabilityArgs(
            cluster_name=eks.cluster.name,
            eks_cluster_arn=eks.cluster.arn,
            account_id=account_id,
            region=s.region,
            stack=config.stack,
            partition=partition,
            tags=tags,
            depends_on=[hyperpod.cluster, eks.addons["eks-pod-identity-agent"]],
        ),
    )
operator = InferenceOperator(
    "inference-operator",
    InferenceOperatorArgs(
        cluster_name=eks.cluster.name,
        oidc_provider_arn=eks.oidc_provider.arn,
        oidc_issuer_url=eks.oidc_issuer,
        hyperpod_cluster_arn=hyperpod.arn,
        model_bucket_arn=models.arn,
        model_prefix=s.checkpoint.effective_prefix,
        addon_version=s.inference_operator.addon_version,
        region=s.region,
        account_id=account_id,
        stack=config.stack,
        partition=partition,
        amp_workspace_arn=observability.prometheus.arn if observability else None,
        tags=tags,
        depends_on=[hyperpod.cluster, dependencies.release],
    ),
)
staged = []
if s.checkpoint.staging == "job":
    staging = CheckpointStaging(
        "checkpoint",
        StagingArgs(
            settings=s,
            provider=eks.provider,
            model_bucket_name=models.name,
            model_bucket_arn=models.arn,
            oidc_provider_arn=eks.oidc_provider.arn,
            oidc_issuer_url=eks.oidc_issuer,
            hf_token=config.hf_token,
            tags=tags,
            depends_on=[hyperpod.cluster],
        ),
    )
    staged.append(staging.job)
endpoint = InferenceEndpoint(
    "endpoint",
    EndpointArgs(
        settings=s,
        cluster=ClusterFacts(
            model_bucket=models.name,
            az_name=placement.az_name,
            placement_group=placement.placement_group_name,
        ),
        provider=eks.provider,
        # The endpoint's pods need the operator (its CRD and controller), the nodes and the
        # device plugins.
        # The staged checkpoint: the Job completes only when the manifest is written.
        depends_on=[operator.addon, hyperpod.cluster, dependencies.release, *staged],
        tags=tags,
    ),
)

pulumi.export("region", s.region)
pulumi.export("gpuAvailabilityZoneId", s.availability_zone_id)
pulumi.export("gpuAvailabilityZone", placement.az_name)
pulumi.export("vpcId", network.vpc_id)
pulumi.export("gpuSubnetId", network.gpu_subnet_id)
pulumi.export("privateSubnetIds", network.private_subnet_ids)
pulumi.export("eksClusterName", eks.cluster.name)
pulumi.export("kubeconfig", eks.kubeconfig)
pulumi.export("hyperpodClusterArn", hyperpod.arn)
pulumi.export("modelBucket", models.name)
pulumi.export("modelPrefix", s.checkpoint.effective_prefix)
pulumi.export("inferenceOperatorVersion", s.inference_operator.version)
pulumi.export("inferenceOperatorAddonVersion", s.inference_operator.addon_version)
if observability:
    pulumi.export("grafanaUrl", observability.grafana_url)
    pulumi.export("prometheusEndpoint", observability.prometheus_endpoint)
pulumi.export("endpointName", s.endpoint.name)
pulumi.export("endpointMode", s.endpoint.mode)
pulumi.export("roleNodeSelectors", {r: role_node_selector(r) for r in GPU_ROLES})
