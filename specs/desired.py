"""The desired state of a stack: every resource a policy rule judges, built from the settings
by pure functions before anything is registered.

This module names the components (the first part of every resource name) and wires their
references to each other's outputs as placeholders; `__main__.py` hands each component its
part. `resources()` is what the policy gate judges.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.refs import ref
from core.regions import partition_of
from core.vocabulary import (
    ENDPOINT_ADMISSION,
    ENDPOINT_NAMESPACES,
    PROJECT_TAG,
    ROUTER_ISOLATION,
    STACK_TAG,
    TRAFFIC_SPLIT_NAME,
)
from core.vocabulary import cluster_name as stack_cluster_name
from settings.stack import StackSettings
from specs.base import Desired
from specs.benchmark import BenchmarkAccessSpec, benchmark_access
from specs.buckets import BucketSpec, secure_bucket
from specs.ci.runner import CiRunnerSpec, ci_runner, runner_workflows
from specs.eks import eks_cluster
from specs.endpoint import ClusterFacts, EndpointSpec, endpoint, namespace_desired
from specs.hyperpod import HyperPodRefs, HyperPodSpec, hyperpod_cluster
from specs.isolation.admission import AdmissionSpec, endpoint_admission
from specs.isolation.instance_metadata import guarded_namespace
from specs.isolation.routers import router_ingress
from specs.lifecycle import ON_CREATE, scripts_bucket, source_s3_uri
from specs.network import SubnetSpec, flow_logs_policy, subnet_specs
from specs.nodes import NodeSecurityGroupSpec, node_security_group
from specs.observability import collector_policy
from specs.operator import OperatorSpec, operator
from specs.slo.alerting import AlertingSpec, alerting
from specs.staging import StagingSpec, staging
from specs.traffic import TrafficSpec, traffic_split

# Component names: the first part of every child's name, so part of every URN (a contract).
NETWORK, PLACEMENT, EKS, NODES = "network", "placement", "eks", "nodes"
LIFECYCLE, MODELS, DEPENDENCIES, HYPERPOD = "lifecycle", "models", "dependencies", "hyperpod"
OBSERVABILITY, OPERATOR, CHECKPOINT, ENDPOINT = (
    "observability",
    "inference-operator",
    "checkpoint",
    "endpoint",
)
BENCHMARK = "benchmark"
CI_RUNNER = "ci-runner"  # hyperpod-dpd:ci.runner codebuild
NAMESPACES = "endpoint-namespaces"  # several endpoints: their namespaces, one resource each
ADMISSION = "endpoint-admission"  # who may run pods in the endpoints' namespaces
TRAFFIC = TRAFFIC_SPLIT_NAME  # the weighted split in front of them (core/vocabulary.py)
ROUTERS = "routers"  # who may open connections to the routers (the operator's namespace)
# Outputs that are not a child resource's: an invoke's, a component's, the config's.
ACCOUNT_ID = ref("aws", "accountId")
# Who deploys: ci.deployRoleArn, else the issuer of the session running `pulumi up`
# (program/stack_config.py deploying_principal).
DEPLOYER_ARN = ref("aws", "deployerArn")
HF_TOKEN = ref("config", "hfToken")
PRIVATE_SUBNET_IDS = ref(NETWORK, "privateSubnetIds")
AZ_NAME = ref(PLACEMENT, "azName")


def base_tags(project: str, stack: str) -> dict[str, str]:
    """Tags every AWS resource of the stack carries (cost allocation, ownership)."""
    return {PROJECT_TAG: project, STACK_TAG: stack, "managed-by": "pulumi"}


@dataclass(frozen=True)
class DesiredState:
    project: str
    stack: str
    settings: StackSettings
    tags: dict[str, str]
    cluster_name: str
    partition: str
    subnets: tuple[SubnetSpec, ...]
    nodes: NodeSecurityGroupSpec
    eks_cluster: Desired
    lifecycle_bucket: BucketSpec
    models: BucketSpec
    hyperpod: HyperPodSpec
    operator: OperatorSpec
    collector_policy: Desired | None  # observability enabled
    alerting: AlertingSpec | None  # an SLO set (observability enabled)
    staging: StagingSpec | None  # checkpoint.staging: job
    endpoints: tuple[EndpointSpec, ...]  # by key; the single endpoint: one, named "endpoint"
    namespaces: tuple[Desired, ...]  # several endpoints: the namespaces they share
    admission: AdmissionSpec  # only the operator's pods in the endpoints' namespaces
    traffic: TrafficSpec | None  # hyperpod-dpd:traffic
    benchmark: BenchmarkAccessSpec
    flow_logs_policy: Desired | None = None  # network.flowLogs: the delivery role's policy
    # Several endpoints: each shared namespace's pods kept from the instance metadata service
    # (the single endpoint's is its own: EndpointSpec.metadata_policy).
    namespace_policies: tuple[Desired, ...] = ()
    ci_runner: CiRunnerSpec | None = None  # ci.runner: codebuild
    routers: Desired | None = None  # the routers' NetworkPolicy (networkPolicy.enabled)

    @property
    def endpoint(self) -> EndpointSpec:
        """The first endpoint (the only one of a stack with `endpoint`)."""
        return self.endpoints[0]

    def resources(self) -> list[Desired]:
        """Every desired resource a rule may judge, in registration order."""
        out = [s.resource for s in self.subnets]
        if self.flow_logs_policy:
            out.append(self.flow_logs_policy)
        out += [self.nodes.group, *self.nodes.rules, self.eks_cluster]
        for bucket in (self.lifecycle_bucket, self.models, self.operator.tls_bucket):
            out += [bucket.bucket, *bucket.guards]
        out += [self.hyperpod.cluster, self.hyperpod.execution_s3]
        op = self.operator
        out += [op.s3_csi_policy, op.execution_policy, op.alb_controller_policy]
        out += [op.alb_controller_targets, op.keda_policy]
        out.append(op.alb_internal_only)
        if self.collector_policy:
            out.append(self.collector_policy)
        if self.alerting:
            out += self.alerting.resources()
        if self.staging:
            st = self.staging
            out += [st.policy, st.code, *([st.token] if st.token else []), *st.jobs]
            out += [st.metadata_policy] if st.metadata_policy else []
        out += [*self.namespaces, *self.namespace_policies, *self.admission.resources()]
        for spec in self.endpoints:
            if spec.namespace:
                out.append(spec.namespace)
            out.append(spec.iec)
            for policy in (spec.network_policy, spec.metadata_policy):
                if policy:
                    out.append(policy)
        bench = self.benchmark
        out += [bench.namespace_resource, bench.policy]
        out += [bench.metadata_policy] if bench.metadata_policy else []
        if self.traffic:
            out += self.traffic.resources()
        if self.ci_runner:
            out += self.ci_runner.resources()
        if self.routers:
            out.append(self.routers)
        return out


def desired_state(
    s: StackSettings, project: str, stack: str, *, has_hf_token: bool = False
) -> DesiredState:
    tags = base_tags(project, stack)
    partition = partition_of(s.region)
    cluster_name = stack_cluster_name(project, stack)
    subnets = tuple(subnet_specs(NETWORK, s, tags))
    (gpu_subnet,) = [x.resource.name for x in subnets if x.plan.tier == "gpu"]
    nodes = node_security_group(
        NODES,
        s.network.vpc_cidr,
        vpc_id=ref(f"{NETWORK}-vpc", "id"),
        cluster_security_group_id=ref(f"{EKS}-cluster", "clusterSecurityGroupId"),
        tags=tags,
    )
    eks = eks_cluster(
        EKS,
        cluster_name,
        s.eks.kubernetes_version,
        PRIVATE_SUBNET_IDS,
        list(s.eks.public_access_cidrs),
        tags,
    )
    lifecycle = scripts_bucket(LIFECYCLE, tags, tuple(s.deployer_arns), DEPLOYER_ARN)
    models = secure_bucket(
        MODELS,
        tags,
        bucket_name=s.checkpoint.bucket_name,
        retain_on_delete=s.checkpoint.retain_bucket_on_delete,
        protect=s.protect,
    )
    prefixes = tuple(c.effective_prefix for c in s.staged_checkpoints())
    hyperpod = hyperpod_cluster(
        HYPERPOD,
        cluster_name,
        dict(s.instance_groups),
        HyperPodRefs(
            eks_cluster_arn=ref(eks.name, "arn"),
            system_subnet_ids=PRIVATE_SUBNET_IDS,
            gpu_subnet_id=ref(gpu_subnet, "id"),
            security_group_id=nodes.id,
            lifecycle_source_s3_uri=source_s3_uri(lifecycle),
            lifecycle_bucket_arn=lifecycle.arn,
            model_bucket_arn=models.arn,
        ),
        ON_CREATE,
        prefixes,
        tags,
    )
    observed = s.observability.enabled
    collector = (
        collector_policy(OBSERVABILITY, ACCOUNT_ID, s.region, partition) if observed else None
    )
    op = operator(
        OPERATOR,
        models.arn,
        prefixes,
        ACCOUNT_ID,
        ref(f"{OBSERVABILITY}-amp", "arn") if observed else None,
        s.region,
        partition,
        tags,
        vpc_arn=ref(f"{NETWORK}-vpc", "arn"),
    )
    staged = None
    if s.checkpoint.staging == "job":
        token = HF_TOKEN if has_hf_token else None
        staged = staging(CHECKPOINT, s, models.bucket_name, models.arn, token)
    placement_group = ref(f"{PLACEMENT}-cluster-pg", "name") if s.network.placement_group else None
    workspace = ref(f"{OBSERVABILITY}-amp", "id") if observed else None
    facts = ClusterFacts(models.bucket_name, AZ_NAME, placement_group, workspace)
    iecs, namespaces, namespace_policies = _endpoints(s, facts, tags)
    cache_paths = {x.config.model_cache.host_path for x in iecs if x.config.model_cache.weights}
    return DesiredState(
        project=project,
        stack=stack,
        settings=s,
        tags=tags,
        cluster_name=cluster_name,
        partition=partition,
        subnets=subnets,
        nodes=nodes,
        eks_cluster=eks,
        lifecycle_bucket=lifecycle,
        models=models,
        hyperpod=hyperpod,
        operator=op,
        collector_policy=collector,
        alerting=alerting(OBSERVABILITY, s, stack, ACCOUNT_ID, partition, tags),
        staging=staged,
        endpoints=iecs,
        namespaces=namespaces,
        admission=endpoint_admission(
            ADMISSION, (ENDPOINT_ADMISSION,), s, tuple(sorted(cache_paths))
        ),
        traffic=traffic_split(
            TRAFFIC,
            s,
            ref(f"{NETWORK}-vpc", "id"),
            PRIVATE_SUBNET_IDS,
            tags,
            nodes_security_group_id=nodes.id,
            account_id=ACCOUNT_ID,
            partition=partition,
        ),
        benchmark=benchmark_access(BENCHMARK, s, models.arn),
        flow_logs_policy=(
            flow_logs_policy(NETWORK, stack, ACCOUNT_ID, s.region, partition)
            if s.network.flow_logs
            else None
        ),
        namespace_policies=namespace_policies,
        ci_runner=_ci_runner(s, stack, subnets, partition, tags),
        routers=router_ingress(f"{ROUTERS}-ingress", (ROUTER_ISOLATION,), s),
    )


def _ci_runner(
    s: StackSettings,
    stack: str,
    subnets: tuple[SubnetSpec, ...],
    partition: str,
    tags: dict[str, str],
) -> CiRunnerSpec | None:
    """The deploy jobs' runner in the private subnets (ci.runner codebuild), where the EKS API
    answers."""
    ci = s.ci
    if ci.runner != "codebuild" or ci.repository is None or ci.connection_arn is None:
        return None
    return ci_runner(
        CI_RUNNER,
        stack,
        repository=ci.repository,
        connection_arn=ci.connection_arn,
        compute_type=ci.compute_type,
        vpc_id=ref(f"{NETWORK}-vpc", "id"),
        private_subnet_ids=[
            ref(x.resource.name, "id") for x in subnets if x.plan.tier == "private"
        ],
        cluster_security_group_id=ref(f"{EKS}-cluster", "clusterSecurityGroupId"),
        region=s.region,
        account_id=ACCOUNT_ID,
        partition=partition,
        tags=tags,
        workflows=runner_workflows(ci.pull_request_preview, bool(s.traffic)),
    )


def _endpoints(
    s: StackSettings, facts: ClusterFacts, tags: dict[str, str]
) -> tuple[tuple[EndpointSpec, ...], tuple[Desired, ...], tuple[Desired, ...]]:
    """One spec per endpoint. The single `endpoint` owns its namespace, as it always has;
    several endpoints share theirs, each one resource of its own (removing an endpoint never
    deletes the namespace another runs in), and so is each shared namespace's metadata egress
    policy ("default"'s too, when endpoints run there)."""
    listed = s.entries()
    if len(listed) == 1 and listed[0].key is None:
        return (endpoint(ENDPOINT, s, facts, tags, listed[0]),), (), ()
    specs = tuple(endpoint(x.resource_name, s, facts, tags, x, own_namespace=False) for x in listed)
    used = sorted({x.config.namespace for x in listed})
    parents = (ENDPOINT_NAMESPACES,)
    namespaces = tuple(
        namespace_desired(f"{NAMESPACES}-{ns}", parents, ns, s.eks.kubernetes_version)
        for ns in used
        if ns != "default"
    )
    policies = (
        guarded_namespace(s, f"{NAMESPACES}-{ns}-metadata-egress", parents, ns) for ns in used
    )
    return specs, namespaces, tuple(p for p in policies if p is not None)
