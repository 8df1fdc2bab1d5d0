"""hyperpod-dpd: the Pulumi program.

Config flows one way: the stack's config -> typed settings -> the desired state (pure specs)
-> the policy gate -> components -> resources. Bad config and mandatory policy violations stop
the program before the first resource is registered, so a typo never half-creates a stack.
"""

import pulumi
import pulumi_aws as aws

from core import api_key
from core.vocabulary import DPD_ROLES, role_node_selector
from infra.bucket import SecureBucket, SecureBucketArgs
from infra.ci_runner import CiRunner, CiRunnerArgs
from infra.dependencies import HyperPodDependencies, HyperPodDependenciesArgs
from infra.efa import EfaSecurityGroup, EfaSecurityGroupArgs
from infra.eks import Eks, EksArgs
from infra.hyperpod import HyperPodArgs, HyperPodCluster
from infra.lifecycle import LifecycleScripts, LifecycleScriptsArgs
from infra.network import Network, NetworkArgs
from infra.observability import Observability, ObservabilityArgs
from infra.operator import InferenceOperator, InferenceOperatorArgs
from infra.placement import Placement, PlacementArgs
from policies.gate import enforce, judgement
from program.outputs import Outputs
from program.stack_config import deployer_arn, deploying_principal, load_stack_config
from specs import desired as names
from specs.eks import addon_configuration
from specs.network import flow_log_group_name
from workloads.admission import AdmissionArgs, EndpointAdmission
from workloads.benchmark import BenchmarkAccess, BenchmarkAccessArgs
from workloads.endpoint import (
    EndpointArgs,
    EndpointNamespaces,
    InferenceEndpoint,
    NamespacesArgs,
)
from workloads.routers import RouterIsolation, RouterIsolationArgs
from workloads.service_account import ClusterAccess
from workloads.staging import CheckpointStaging, StagingArgs
from workloads.traffic import TrafficArgs, TrafficSplit

# --- Settings, desired state, gate: nothing is registered before these pass --------------------
config = load_stack_config()
s = config.settings
verdict = judgement(s, config.project, config.stack, has_hf_token=config.hf_token is not None)
enforce(verdict)
desired = verdict.desired
principal = deploying_principal(s)  # ci.deployRoleArn, or asks AWS who runs `pulumi up`
deployer = deployer_arn(s, principal)

# --- Components -----------------------------------------------------------------------------
tags, partition = desired.tags, desired.partition
outputs = Outputs()
outputs.publish("config", hfToken=config.hf_token)
account_id = aws.get_caller_identity_output().account_id
outputs.publish("aws", accountId=account_id, deployerArn=principal)

network = Network(
    names.NETWORK,
    NetworkArgs(
        vpc_cidr=s.network.vpc_cidr,
        gpu_az_id=s.availability_zone_id,
        subnets=desired.subnets,
        outputs=outputs,
        nat_gateways=s.network.nat_gateways,
        region=s.region,
        tags=tags,
        flow_log_retention_days=(
            s.network.flow_log_retention_days if s.network.flow_logs else None
        ),
        account_id=account_id,
        partition=partition,
        log_group_name=flow_log_group_name(config.stack),
        flow_logs_policy=desired.flow_logs_policy,
    ),
)
placement = Placement(
    names.PLACEMENT,
    PlacementArgs(s.availability_zone_id, outputs, s.network.placement_group, tags),
)
eks = Eks(
    names.EKS,
    EksArgs(
        cluster=desired.eks_cluster,
        cluster_name=desired.cluster_name,
        kubernetes_version=s.eks.kubernetes_version,
        admin_role_arns=list(s.eks.admin_role_arns),
        region=s.region,
        outputs=outputs,
        view_role_arns=s.view_role_arns(),
        deployer_arn=deployer,
        protect=s.protect,
        partition=partition,
        tags=tags,
        addon_configuration=addon_configuration(s.network_policy.enabled),
    ),
)
efa = EfaSecurityGroup(names.NODES, EfaSecurityGroupArgs(desired.nodes, outputs))
if desired.ci_runner is not None:
    # The deploy jobs' runner in the VPC (a private API answers nowhere else): after the
    # network it needs to reach GitHub and the cluster whose API it reaches.
    CiRunner(
        names.CI_RUNNER,
        CiRunnerArgs(desired.ci_runner, outputs, depends_on=[network], tags=tags),
    )
lifecycle = LifecycleScripts(
    names.LIFECYCLE, LifecycleScriptsArgs(desired.lifecycle_bucket, outputs, tags)
)
models = SecureBucket(names.MODELS, SecureBucketArgs(desired.models, outputs))
dependencies = HyperPodDependencies(
    names.DEPENDENCIES,
    HyperPodDependenciesArgs(provider=eks.provider, depends_on=list(eks.addons.values())),
)
hyperpod = HyperPodCluster(
    names.HYPERPOD,
    HyperPodArgs(
        spec=desired.hyperpod,
        outputs=outputs,
        protect=s.protect,
        partition=partition,
        region=s.region,
        tags=tags,
        depends_on=[dependencies.release, *lifecycle.objects],
    ),
)
eks.create_node_addons(hyperpod.cluster)
observability = None
if desired.collector_policy is not None:
    observability = Observability(
        names.OBSERVABILITY,
        ObservabilityArgs(
            collector_policy=desired.collector_policy,
            outputs=outputs,
            cluster_name=eks.cluster.name,
            eks_cluster_arn=eks.cluster.arn,
            account_id=account_id,
            region=s.region,
            stack=config.stack,
            partition=partition,
            tags=tags,
            depends_on=[hyperpod.cluster, eks.addons["eks-pod-identity-agent"]],
            alerting=desired.alerting,
        ),
    )
operator = InferenceOperator(
    names.OPERATOR,
    InferenceOperatorArgs(
        spec=desired.operator,
        outputs=outputs,
        cluster_name=eks.cluster.name,
        oidc_provider_arn=eks.oidc_provider.arn,
        oidc_issuer_url=eks.oidc_issuer,
        hyperpod_cluster_arn=hyperpod.arn,
        addon_version=s.inference_operator.addon_version,
        stack=config.stack,
        partition=partition,
        region=s.region,
        account_id=account_id,
        tags=tags,
        depends_on=[hyperpod.cluster, dependencies.release],
    ),
)
# How the workloads reach the cluster and give their pods AWS credentials (IRSA).
cluster_access = ClusterAccess(eks.provider, eks.oidc_provider.arn, eks.oidc_issuer)
staged: dict[str, pulumi.Resource] = {}  # each staged copy's Job, by prefix
if desired.staging is not None:
    staging = CheckpointStaging(
        names.CHECKPOINT,
        StagingArgs(
            spec=desired.staging,
            outputs=outputs,
            cluster=cluster_access,
            tags=tags,
            depends_on=[hyperpod.cluster],
        ),
    )
    staged = staging.job_of
shared_namespaces: dict[str, pulumi.Resource] = {}
shared_guards: dict[str, pulumi.Resource] = {}  # each shared namespace's metadata egress policy
if desired.namespaces or desired.namespace_policies:
    shared = EndpointNamespaces(
        names.NAMESPACES,
        NamespacesArgs(
            list(desired.namespaces), outputs, eks.provider, list(desired.namespace_policies)
        ),
    )
    shared_namespaces, shared_guards = shared.by_name, shared.policy_of
# Only the operator's pods in the endpoints' namespaces: in force before any endpoint starts.
admission = EndpointAdmission(
    names.ADMISSION, AdmissionArgs(desired.admission, outputs, eks.provider)
)
# Who may call the routers: in force before any endpoint's router starts.
routers = None
if desired.routers is not None:
    routers = RouterIsolation(
        names.ROUTERS,
        RouterIsolationArgs(desired.routers, outputs, eks.provider, depends_on=[operator.addon]),
    )
endpoints = {}
for spec in desired.endpoints:
    shared = shared_namespaces.get(spec.config.namespace)
    guard = shared_guards.get(spec.config.namespace)
    endpoints[spec.name] = InferenceEndpoint(
        spec.name,
        EndpointArgs(
            spec=spec,
            outputs=outputs,
            provider=eks.provider,
            # The endpoint's pods need the operator (its CRD and controller), the nodes and the
            # device plugins; its own staged checkpoint: the Job completes only when the
            # manifest is written.
            depends_on=[
                operator.addon,
                hyperpod.cluster,
                dependencies.release,
                admission,
                *([routers] if routers is not None else []),
                *([guard] if guard is not None else []),
                *(
                    [staged[location]]
                    if (location := spec.config.model_source.model_location) in staged
                    else []
                ),
            ],
            shared_namespace=shared,
        ),
    )
endpoint = endpoints[desired.endpoint.name]
# The namespace of the clients the stack runs in the cluster (benchmark runs, verify's prompts).
benchmark = BenchmarkAccess(
    names.BENCHMARK,
    BenchmarkAccessArgs(spec=desired.benchmark, outputs=outputs, cluster=cluster_access, tags=tags),
)
traffic = None
if desired.traffic is not None:
    traffic = TrafficSplit(
        names.TRAFFIC,
        TrafficArgs(
            spec=desired.traffic,
            outputs=outputs,
            provider=eks.provider,
            # The routers' Services come with the endpoints; the TargetGroupBinding CRD and its
            # controller with the operator add-on.
            depends_on=[operator.addon, *endpoints.values()],
            clients_namespace=benchmark.namespace,  # where the API key's Secret goes
        ),
    )

# --- Stack outputs --------------------------------------------------------------------------
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
# What `hyperpod-dpd preflight` and `verify` compare the boot script in S3, its versions and the
# cluster's lifecycle configuration with.
pulumi.export("lifecycleBucket", lifecycle.bucket.name)
pulumi.export("lifecycleScriptSha256", lifecycle.sha256)
pulumi.export("lifecycleScriptVersionId", lifecycle.version_id)
# What preflight and verify compare each instance group's ExecutionRole with (DescribeCluster).
pulumi.export("hyperpodExecutionRoleArn", hyperpod.execution_role.arn)
pulumi.export("modelPrefix", s.checkpoint.effective_prefix)
pulumi.export("inferenceOperatorVersion", s.inference_operator.version)
pulumi.export("inferenceOperatorAddonVersion", s.inference_operator.addon_version)
if observability:
    pulumi.export("grafanaUrl", observability.grafana_url)
    pulumi.export("prometheusEndpoint", observability.prometheus_endpoint)
    if observability.alerts_topic is not None:
        pulumi.export("alertsTopicArn", observability.alerts_topic.arn)
if len(desired.endpoints) == 1 and s.entries()[0].key is None:
    pulumi.export("endpointName", s.endpoint.name)
    pulumi.export("endpointMode", s.endpoint.mode)
else:
    pulumi.export(
        "endpoints",
        {
            x.key: {"name": x.config.name, "namespace": x.config.namespace, "mode": x.config.mode}
            for x in s.entries()
        },
    )
if traffic is not None:
    pulumi.export("trafficUrl", traffic.url)
    pulumi.export(api_key.OUTPUT, traffic.api_key)  # a secret: --show-secrets
    pulumi.export("trafficWeights", dict(s.traffic))
pulumi.export("roleNodeSelectors", {r: role_node_selector(r) for r in DPD_ROLES})
