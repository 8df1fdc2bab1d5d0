"""The words every layer shares, defined once: labels, annotations, type tokens, roles, rules.

A public contract: component type tokens and resource names are part of every user's Pulumi
state (URNs), label keys select nodes of running clusters, annotation keys are what the policy
rules read. Change one only with an alias (component tokens) or a migration note.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

PROJECT = "hyperpod-dpd"


def cluster_name(project: str, stack: str) -> str:
    """The name of the stack's EKS cluster and of its HyperPod cluster (settings/stack_name.py
    checks that both services take it)."""
    return f"{project}-{stack}"


def ci_runner_project(stack: str) -> str:
    """The CodeBuild project that runs `stack`'s deploy jobs (hyperpod-dpd:ci.runner codebuild):
    a workflow job's runs-on names it (codebuild-<project>-<run id>-<attempt>)."""
    return f"{cluster_name(PROJECT, stack)}-runner"


# --- Endpoints: the one `endpoint` or the `endpoints` map ----------------------------------
SINGLE_ENDPOINT = "endpoint"  # its config key, and its resource name (what stacks have always had)


def endpoint_resource_name(key: str | None) -> str:
    """The component name of the endpoint at `key` of `endpoints` (None: the one `endpoint`),
    the prefix of its resources' names."""
    return SINGLE_ENDPOINT if key is None else f"{SINGLE_ENDPOINT}-{key}"


def endpoint_config_path(resource_name: str) -> tuple[str, ...]:
    """The inverse: where the endpoint named `resource_name` is configured, ('endpoint',) or
    ('endpoints', key). The CrossGuard pack sees names only, and names its fixes' keys so."""
    if resource_name == SINGLE_ENDPOINT:
        return (SINGLE_ENDPOINT,)
    return ("endpoints", resource_name.removeprefix(f"{SINGLE_ENDPOINT}-"))


# --- Node roles ----------------------------------------------------------------------------
Role = Literal["prefill", "decode", "colocated", "system"]
DPD_ROLES: tuple[str, ...] = ("prefill", "decode")  # the two roles of a DPD endpoint
GPU_ROLES: tuple[str, ...] = (*DPD_ROLES, "colocated")  # the roles of GPU groups
ROLES: tuple[str, ...] = (*GPU_ROLES, "system")

# --- Kubernetes labels, annotations, taints and extended resources --------------------------
ROLE_LABEL = "hyperpod-dpd/role"  # on HyperPod nodes: which role's pods they run
GROUP_LABEL = "hyperpod-dpd/instance-group"  # on HyperPod nodes: the instance group's name
MODE_LABEL = "hyperpod-dpd/mode"  # on the endpoint: dpd | colocated
CHECKPOINT_LABEL = "hyperpod-dpd/checkpoint"  # on the staging Job: (source, revision, prefix)
BENCHMARK_LABEL = "hyperpod-dpd/benchmark"  # on a benchmark run's Job and ConfigMap: the run id
# Facts the CRD has no field for, carried on the endpoint for the policy rules to read.
ANNOTATION_PREFIX = "hyperpod-dpd/"
GPU_RESOURCE = "nvidia.com/gpu"  # extended resource, and the key of the GPU nodes' taint
EFA_RESOURCE = "vpc.amazonaws.com/efa"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
# On the operator's worker pods. The DPD role: "Pods labelled
# inference.sagemaker.aws.amazon.com/dpd-role=prefill|decode" (AWS DPD docs,
# sagemaker-hyperpod-model-deployment-dpd.html, "Verifying": kubectl get pod -l ...).
DPD_ROLE_POD_LABEL = "inference.sagemaker.aws.amazon.com/dpd-role"
# The endpoint: "The operator labels its pods app=<metadata.name>" (awslabs/ai-on-sagemaker-hyperpod
# website/docs/00-eks-orchestration/inference/inference-gateway/01-first-gateway.md @141076d5,
# its `kubectl get pods -l app=vllm-qwen --show-labels` output); the HyperPod CLI finds an
# endpoint's pods by the same label (aws/sagemaker-hyperpod-cli
# src/sagemaker/hyperpod/inference/hp_endpoint.py @011ca927, HPEndpoint.list_pods).
ENDPOINT_POD_LABEL = "app"
# Set on every namespace by the API server, its value the namespace's name (Kubernetes >= 1.22,
# https://kubernetes.io/docs/reference/labels-annotations-taints/#kubernetes-io-metadata-name).
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


# The NetworkPolicy of each namespace the stack runs pods in that keeps its pods from the
# instance metadata service (specs/isolation/instance_metadata.py; `verify` judges it live).
INSTANCE_METADATA_POLICY = "no-instance-metadata"


# The NetworkPolicy of the routers' namespace (the operator's), who may open connections to its
# pods (specs/isolation/routers.py; `verify` tries it from outside).
ROUTERS_POLICY = "routers-ingress"


def network_policy_name(endpoint: str) -> str:
    """The NetworkPolicy the stack gives endpoint `endpoint`'s workers, in its namespace
    (specs/isolation/network_policies.py; `verify` reads it back)."""
    return f"{endpoint}-workers"


# --- AWS tags -------------------------------------------------------------------------------
TIER_TAG = "hyperpod-dpd:tier"  # on subnets: gpu | private | public

# --- The operator's CRD ---------------------------------------------------------------------
IEC_API_VERSION = "inference.sagemaker.aws.amazon.com/v1"
IEC_KIND = "InferenceEndpointConfig"

# --- Namespaces and the router --------------------------------------------------------------
OPERATOR_NAMESPACE = "hyperpod-inference-system"  # the operator and every endpoint's router
STAGING_NAMESPACE = "hyperpod-dpd-system"  # this stack's (the checkpoint staging Job)
# This stack's too: the benchmark runs' Jobs and their service account, apart from the endpoints'
# namespaces, where only the operator's pods run (specs/isolation/admission.py).
BENCHMARK_NAMESPACE = "hyperpod-dpd-benchmark"
# The operator's controller's service account, as the EKS add-on names it (the Helm chart:
# `hyperpod-inference-operator-controller-manager`; infra/operator.py trusts it for IRSA). The AWS
# setup guide's execution role trust names it: `system:serviceaccount:hyperpod-inference-system:
# hyperpod-inference-controller-manager` (sagemaker-hyperpod-model-deployment-setup.html).
OPERATOR_SERVICE_ACCOUNT = "hyperpod-inference-controller-manager"
# The Kubernetes group of the cluster admins' access entries (eks.adminRoleArns and the deploying
# role, infra/eks.py): who besides the operator may run pods in the endpoints' namespaces.
ADMINS_GROUP = "hyperpod-dpd-admins"
# The tags naming the stack that owns an AWS resource (specs/desired.py base_tags): the split's
# target groups carry them, which is how the load balancer controller's policy finds them.
PROJECT_TAG, STACK_TAG = "hyperpod-dpd:project", "hyperpod-dpd:stack"
OBSERVABILITY_NAMESPACE = "hyperpod-observability"  # the observability add-on's collector
# How often that collector scrapes the workers (the add-on's scrapeInterval, infra/observability.py):
# a rate over the workers' counters spans several of its scrapes (core/vllm/scaling_signals.py).
SCRAPE_INTERVAL_SECONDS = 30
# kube-system: the HyperPod dependencies chart's release and the add-ons the operator needs (the
# S3 and FSx CSI drivers, metrics-server: their service accounts, infra/operator.py).
SYSTEM_NAMESPACE = "kube-system"
# The dependencies chart's deep-health-check creates it (aws/sagemaker-hyperpod-cli,
# helm_chart/HyperPodHelmChart/charts/deep-health-check/templates/aws-hyperpod-namespace.yaml).
HYPERPOD_NAMESPACE = "aws-hyperpod"
# The cert-manager EKS add-on runs in its own namespace (EKS User Guide, "cert-manager"
# community add-on: https://docs.aws.amazon.com/eks/latest/userguide/community-addons.html).
CERT_MANAGER_NAMESPACE = "cert-manager"
# What the stack itself installs, by the namespace each part runs in: the components take their
# namespaces from here, so a part added with a namespace of its own adds it to the list.
STACK_NAMESPACES: dict[str, str] = {
    "the inference operator add-on (its KEDA, every endpoint's router)": OPERATOR_NAMESPACE,
    "the checkpoint staging Job": STAGING_NAMESPACE,
    "the benchmark runs": BENCHMARK_NAMESPACE,
    "the observability add-on": OBSERVABILITY_NAMESPACE,
    "the HyperPod dependencies chart and the CSI and metrics-server add-ons": SYSTEM_NAMESPACE,
    "the dependencies chart's health checks": HYPERPOD_NAMESPACE,
    "the cert-manager add-on": CERT_MANAGER_NAMESPACE,
}
# Namespaces an endpoint must not use: creating one again fails with AlreadyExists, and removing
# the endpoint would delete it. Kubernetes' own (kube-*) are refused by prefix.
RESERVED_NAMESPACES = tuple(dict.fromkeys(STACK_NAMESPACES.values()))
# The router's Service, the one definition traffic (the split's TargetGroupBinding), verify
# and benchmark use. The operator creates it for every endpoint with intelligent routing, which
# this stack enables in both modes (specs/iec.py), in its own namespace, as
# `<name>-<namespace>-routing-service`, plain HTTP on port 443: AWS DPD docs
# (https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-model-deployment-dpd.html,
# "Verifying": http://<deployment>-<namespace>-routing-service.hyperpod-inference-system
# .svc.cluster.local:443/v1/chat/completions). For a colocated endpoint the docs leave it open
# (the caching-routing page names no Service): `hyperpod-dpd verify` checks the Service exists
# there (check "router service"), and the README's canary runbook runs it before any weight
# moves.
ROUTER_SERVICE = "{name}-{namespace}-routing-service"
ROUTER_PORT = 443
# The router's health path, which the ALBs in front of it probe (the operator's through the IEC's
# loadBalancer.healthCheckPath, the split's target groups): the DPD docs' "Complete example" sets
# `loadBalancer.healthCheckPath: /health` (the CRD's default is /ping, SageMaker's container
# contract). Where the sources say otherwise one day, this is the one line to change.
ROUTER_HEALTH_PATH = "/health"
CHAT_COMPLETIONS_PATH = "/v1/chat/completions"


@dataclass(frozen=True)
class RouterService:
    """The router Service of endpoint `endpoint_namespace`/`endpoint`."""

    endpoint: str
    endpoint_namespace: str
    namespace: str = OPERATOR_NAMESPACE  # the Service's own: the operator's
    port: int = ROUTER_PORT

    @property
    def name(self) -> str:
        return ROUTER_SERVICE.format(name=self.endpoint, namespace=self.endpoint_namespace)

    @property
    def host(self) -> str:
        return f"{self.name}.{self.namespace}.svc.cluster.local"

    def url(self, path: str = CHAT_COMPLETIONS_PATH) -> str:
        return f"http://{self.host}:{self.port}{path}"


# The weighted split in front of several endpoints: its component's name (the first part of its
# resources' names, so of their URNs: a contract) and its target group per endpoint key.
TRAFFIC_SPLIT_NAME = "traffic"


# pulumi-aws auto-names load balancers and target groups (aws_lb, aws_lb_target_group) with
# tfbridge.AutoName("name", 32, "-"), ELB's own limit: the logical name, "-" and 7 random
# characters; a logical name too long for that fails the provider's Check.
ELB_NAME_MAX = 32
AUTONAME_SUFFIX = len("-") + 7
# An ALB closes a connection that carries no byte for its idle timeout: 1 to 4000 s, 60 by
# default (ELB docs, application-load-balancers.html#connection-idle-timeout: "The valid range
# is 1-4000 seconds"); the operator's CRD (v3.3) takes the same range for
# loadBalancer.idleTimeoutSeconds (specs/schema/inferenceendpointconfig-v3.3.json).
ALB_IDLE_TIMEOUT_MAX = 4000


def target_group_name(split: str, key: str) -> str:
    """The logical name of split `split`'s target group for endpoint `key`: Pulumi auto-names the
    AWS target group after it (settings/endpoint/traffic.py keeps that within AWS's length)."""
    return f"{split}-{key}"


def router_url(name: str, namespace: str) -> str:
    """The router's in-cluster chat completions URL for endpoint `namespace`/`name`."""
    return RouterService(name, namespace).url()


# --- Resource type tokens, as the engine names them -----------------------------------------
IEC_TYPE = f"kubernetes:{IEC_API_VERSION}:{IEC_KIND}"
HYPERPOD_CLUSTER_TYPE = "aws-native:sagemaker:Cluster"
EKS_CLUSTER_TYPE = "aws:eks/cluster:Cluster"
SUBNET_TYPE = "aws:ec2/subnet:Subnet"
SECURITY_GROUP_TYPE = "aws:ec2/securityGroup:SecurityGroup"
SG_INGRESS_TYPE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
SG_EGRESS_TYPE = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"
BUCKET_TYPE = "aws:s3/bucket:Bucket"
BUCKET_PUBLIC_ACCESS_BLOCK_TYPE = "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock"
BUCKET_OWNERSHIP_TYPE = "aws:s3/bucketOwnershipControls:BucketOwnershipControls"
BUCKET_ENCRYPTION_TYPE = (
    "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"
)
BUCKET_VERSIONING_TYPE = "aws:s3/bucketVersioning:BucketVersioning"
BUCKET_POLICY_TYPE = "aws:s3/bucketPolicy:BucketPolicy"
BUCKET_LIFECYCLE_TYPE = "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration"
ROLE_POLICY_TYPE = "aws:iam/rolePolicy:RolePolicy"
IAM_POLICY_TYPE = "aws:iam/policy:Policy"
JOB_TYPE = "kubernetes:batch/v1:Job"
CONFIG_MAP_TYPE = "kubernetes:core/v1:ConfigMap"
SECRET_TYPE = "kubernetes:core/v1:Secret"
NAMESPACE_TYPE = "kubernetes:core/v1:Namespace"
NETWORK_POLICY_TYPE = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
ADMISSION_POLICY_TYPE = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy"
ADMISSION_BINDING_TYPE = (
    "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding"
)

# --- Component type tokens (public contract: renaming one needs an alias) --------------------
NETWORK = "hyperpod-dpd:infra:Network"
PLACEMENT = "hyperpod-dpd:infra:Placement"
EKS = "hyperpod-dpd:infra:Eks"
NODE_SECURITY_GROUP = "hyperpod-dpd:infra:EfaSecurityGroup"
LIFECYCLE_SCRIPTS = "hyperpod-dpd:infra:LifecycleScripts"
SECURE_BUCKET = "hyperpod-dpd:infra:SecureBucket"
HYPERPOD_DEPENDENCIES = "hyperpod-dpd:infra:HyperPodDependencies"
HYPERPOD_CLUSTER = "hyperpod-dpd:infra:HyperPodCluster"
INFERENCE_OPERATOR = "hyperpod-dpd:infra:InferenceOperator"
OBSERVABILITY = "hyperpod-dpd:infra:Observability"
INFERENCE_ENDPOINT = "hyperpod-dpd:workloads:InferenceEndpoint"
CHECKPOINT_STAGING = "hyperpod-dpd:workloads:CheckpointStaging"
BENCHMARK_ACCESS = "hyperpod-dpd:workloads:BenchmarkAccess"
ENDPOINT_NAMESPACES = "hyperpod-dpd:workloads:EndpointNamespaces"  # of several endpoints
ENDPOINT_ADMISSION = "hyperpod-dpd:workloads:EndpointAdmission"  # who may run pods there
TRAFFIC_SPLIT = "hyperpod-dpd:workloads:TrafficSplit"  # one URL, a weighted split
ROUTER_ISOLATION = "hyperpod-dpd:workloads:RouterIsolation"  # who may call the routers
CI_RUNNER = "hyperpod-dpd:infra:CiRunner"  # the deploy jobs' runner inside the VPC

# --- Policy rules (policies/rules/: one module each; a test keeps the two lists equal) -------
RULE_NAMES: tuple[str, ...] = (
    "hyperpod-dpd-instance-type",
    "hyperpod-dpd-single-az",
    "hyperpod-dpd-efa",
    "hyperpod-dpd-gpu-memory",
    "hyperpod-dpd-pd-buffer-fits",
    "hyperpod-dpd-pd-buffer-capacity",
    "hyperpod-dpd-hash-seed",
    "hyperpod-dpd-image",
    "hyperpod-dpd-image-known-issues",
    "hyperpod-dpd-routing-threshold",
    "hyperpod-dpd-tensor-parallel",
    "hyperpod-dpd-operator-version",
    "hyperpod-dpd-role-capacity",
    "hyperpod-dpd-routing-strategy",
    "hyperpod-dpd-model-size",
    "hyperpod-dpd-shm-volume",
    "hyperpod-dpd-s3-buckets",
    "hyperpod-dpd-boot-scripts",
    "hyperpod-dpd-sns-topics",
    "hyperpod-dpd-iam-wildcards",
    "hyperpod-dpd-public-ingress",
    "hyperpod-dpd-eks-endpoint",
    "hyperpod-dpd-hf-token",
    "hyperpod-dpd-cold-start",
    "hyperpod-dpd-autoscaling-capacity",
    "hyperpod-dpd-traffic-tls",
    "hyperpod-dpd-pod-ingress",
    "hyperpod-dpd-images-by-digest",
)

# Rules no stack may lower (policies/rules/base.py Rule.locked): mandatory everywhere.
LOCKED_RULE_NAMES = frozenset({"hyperpod-dpd-eks-endpoint"})

# Rules only `hyperpod-dpd diff` can judge (they compare two plans: hyperpod_dpd/plan/
# coherent.py), levelled by hyperpod-dpd:policy as the rules above are.
COHERENT_CHANGE_RULE = "hyperpod-dpd-coherent-change"
DIFF_RULE_NAMES: tuple[str, ...] = (COHERENT_CHANGE_RULE,)


def urn(stack: str, project: str, types: tuple[str, ...], name: str) -> str:
    """The URN the engine gives resource `name` of type `types[-1]` inside components of
    types `types[:-1]` (outermost first)."""
    return f"urn:pulumi:{stack}::{project}::{'$'.join(types)}::{name}"


def urn_stack(resource_urn: str) -> str:
    """The stack a URN names (the inverse of `urn`'s first part)."""
    return resource_urn.removeprefix("urn:pulumi:").split("::", 1)[0]


def role_node_selector(role: str) -> dict[str, str]:
    """The nodeSelector that lands a pod on the nodes of `role` (prefill, decode, system)."""
    return {ROLE_LABEL: role}
