"""The typed stack configuration: every user-facing key, its type, default and meaning.

This module is the single description of the `hyperpod-dpd:` config namespace. `Pulumi.yaml`
declares the same keys (a test keeps the two in sync) and the README's reference table is made
from the field descriptions. Models are frozen: config flows one way, stack YAML -> StackConfig
-> components -> resources.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, get_origin

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
)
from pydantic.alias_generators import to_camel

from core.cidrs import parse_cidr
from core.regions import AZ_ID_PATTERN, REGION_PATTERN
from core.units import BYTE_SIZE_FORMS, parse_byte_size
from core.vocabulary import GPU_ROLES, RESERVED_NAMESPACES, Role

# Patterns and how error messages describe them to users.
CIDR_PATTERN = r"^[0-9]{1,3}(\.[0-9]{1,3}){3}/[0-9]{1,2}$"
ROLE_ARN_PATTERN = r"^arn:aws[a-z-]*:iam::[0-9]{12}:role/.+$"
DNS_LABEL_PATTERN = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"
GROUP_NAME_PATTERN = r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$"
INSTANCE_TYPE_PATTERN = r"^ml\.[a-z0-9-]+\.[0-9]*x?large$"
ENV_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"
K8S_VERSION_PATTERN = r"^1\.[0-9]{2}$"
OPERATOR_VERSION_PATTERN = r"^[0-9]+\.[0-9]+(\.[0-9]+)?$"
ADDON_VERSION_PATTERN = r"^v[0-9]+\.[0-9]+\.[0-9]+-eksbuild\.[0-9]+$"
TRAINING_PLAN_PATTERN = r"^arn:aws[a-z-]*:sagemaker:[a-z0-9-]+:[0-9]{12}:training-plan/.+$"
BUCKET_PATTERN = r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$"
SEMVER_PATTERN = r"^[0-9]+\.[0-9]+\.[0-9]+$"
PATTERN_HINTS = {
    REGION_PATTERN: "an AWS Region name such as us-east-2",
    AZ_ID_PATTERN: "an AZ ID such as use2-az2 (not an AZ name such as us-east-2a)",
    CIDR_PATTERN: "an IPv4 CIDR such as 10.0.0.0/16",
    ROLE_ARN_PATTERN: "an IAM role ARN such as arn:aws:iam::111122223333:role/Admin",
    DNS_LABEL_PATTERN: "a DNS-1123 label such as llama-70b (lowercase, digits, '-'; <= 63)",
    GROUP_NAME_PATTERN: "letters, digits and '-', at most 63, starting with a letter or digit",
    INSTANCE_TYPE_PATTERN: "a SageMaker instance type such as ml.p5.48xlarge",
    ENV_NAME_PATTERN: "an environment variable name (letters, digits, '_') such as HF_HOME",
    K8S_VERSION_PATTERN: 'a Kubernetes minor version such as "1.33" (quoted in YAML)',
    OPERATOR_VERSION_PATTERN: 'a version such as "3.3" (quoted in YAML)',
    ADDON_VERSION_PATTERN: "an EKS add-on version such as v1.4.0-eksbuild.1",
    TRAINING_PLAN_PATTERN: "a training plan ARN such as arn:aws:sagemaker:...:training-plan/x",
    BUCKET_PATTERN: "an S3 bucket name such as my-models (lowercase, digits, '.', '-')",
    SEMVER_PATTERN: "a version MAJOR.MINOR.PATCH such as 1.2.3",
}


def _matching(pattern: str, **kwargs: Any) -> Any:
    return StringConstraints(pattern=pattern, **kwargs)


def _canonical_cidr(value: str) -> str:
    parse_cidr(value)  # ValueError: host bits set, octet or prefix out of range, not canonical
    return value


# Rules of S3 general purpose bucket names beyond the character set (S3 User Guide, "General
# purpose bucket naming rules"): names S3 reserves or that read as something else.
_BUCKET_PREFIXES = ("xn--", "sthree-", "amzn-s3-demo-")
_BUCKET_SUFFIXES = ("-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3")


def _bucket_name(value: str) -> str:
    if ".." in value:
        raise ValueError("an S3 bucket name has no two adjacent periods")
    if re.fullmatch(r"\d{1,3}(\.\d{1,3}){3}", value):
        raise ValueError("an S3 bucket name is not formatted as an IP address")
    for prefix in _BUCKET_PREFIXES:
        if value.startswith(prefix):
            raise ValueError(f"S3 reserves bucket names starting with '{prefix}'")
    for suffix in _BUCKET_SUFFIXES:
        if value.endswith(suffix):
            raise ValueError(f"S3 reserves bucket names ending with '{suffix}'")
    return value


def _own_namespace(value: str) -> str:
    if value.startswith("kube-") or value in RESERVED_NAMESPACES:
        raise ValueError(
            f"a namespace this stack may own: not kube-* nor one of {', '.join(RESERVED_NAMESPACES)}"
        )
    return value


def _key_prefix(value: str) -> str:
    """A key prefix the staging role is scoped to: wildcards or '..' would widen or escape it."""
    parts = value.strip("/").split("/")
    if value.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise ValueError("a relative key prefix without empty, '.' or '..' segments, e.g. models/x")
    if not re.fullmatch(r"[A-Za-z0-9._/-]+", value):
        raise ValueError(
            "letters, digits and . _ - / only (IAM policy wildcards * and ? would widen the "
            "staging role's scope)"
        )
    return value


AzId = Annotated[str, _matching(AZ_ID_PATTERN)]
Cidr = Annotated[str, _matching(CIDR_PATTERN), AfterValidator(_canonical_cidr)]
RoleArn = Annotated[str, _matching(ROLE_ARN_PATTERN)]
# DNS-1123 label: Kubernetes namespaces and the names the operator derives Deployments from.
DnsLabel = Annotated[str, _matching(DNS_LABEL_PATTERN)]
# HyperPod's ClusterInstanceGroupSpecification.InstanceGroupName (botocore sagemaker model).
GroupName = Annotated[str, _matching(GROUP_NAME_PATTERN, max_length=63)]
InstanceType = Annotated[str, _matching(INSTANCE_TYPE_PATTERN)]
EnvName = Annotated[str, _matching(ENV_NAME_PATTERN)]
BucketName = Annotated[str, _matching(BUCKET_PATTERN), AfterValidator(_bucket_name)]
Namespace = Annotated[str, _matching(DNS_LABEL_PATTERN), AfterValidator(_own_namespace)]
KeyPrefix = Annotated[
    str, StringConstraints(min_length=1, max_length=512), AfterValidator(_key_prefix)
]

DEFAULT_IMAGE = "public.ecr.aws/deep-learning-containers/vllm:server-hyperpod-cuda-v1.1"
DEFAULT_PD_BUFFER_SIZE = 8 * 2**30


def _env_value(value: Any) -> Any:
    """Kubernetes env values are strings; YAML turns `0` and `False` into other types.

    `PYTHONHASHSEED: 0` and `LMCACHE_SAVE_DECODE_CACHE: False` mean the strings "0" and "False"
    (the values the DPD docs use), so plain scalars are turned into their Python text.
    """
    if isinstance(value, bool | int | float):
        return str(value)
    return value


def _byte_size(value: Any) -> int:
    if isinstance(value, int | str) and not isinstance(value, bool):
        return parse_byte_size(value)
    raise ValueError(BYTE_SIZE_FORMS)


EnvValue = Annotated[str, BeforeValidator(_env_value)]
ByteSize = Annotated[int, BeforeValidator(_byte_size)]


class _Model(BaseModel):
    # extra="forbid": an unknown (usually misspelt) key is an error, never silently ignored.
    # strict=True: no coercion, so `"yes"`, `"3"` or `true` where a number or a boolean belongs
    # is an error naming the key, never silently read as something else.
    model_config = ConfigDict(
        extra="forbid", frozen=True, alias_generator=to_camel, populate_by_name=True, strict=True
    )


class NetworkConfig(_Model):
    vpc_cidr: Cidr = Field(
        "10.0.0.0/16",
        description="IPv4 CIDR of the VPC, a /16 to /20. The GPU subnet takes a quarter of it.",
    )
    control_plane_az_ids: list[AzId] = Field(
        description="AZ IDs (at least two, distinct) for the EKS control-plane and system "
        "subnets. May include availabilityZoneId.",
    )
    placement_group: bool = Field(
        False,
        description="Create an EC2 cluster placement group and name it in the endpoint's "
        "pdSpec.topologySpec.placementGroup.",
    )
    nat_gateways: Literal["single", "perAz"] = Field(
        "single",
        description="'single': one NAT gateway, in the GPU AZ (cheapest); 'perAz': one per AZ "
        "(survives an AZ outage).",
    )


class EksConfig(_Model):
    kubernetes_version: Annotated[str, _matching(K8S_VERSION_PATTERN)] = Field(
        "1.33",
        description="EKS Kubernetes version, pinned. 1.33: the HyperPod dependencies chart's "
        "mpi-operator CRD fails on >= 1.34.",
    )
    public_access_cidrs: list[Cidr] = Field(
        default_factory=list,
        description="CIDRs allowed to reach the public EKS API endpoint. Empty: the endpoint "
        "is private only.",
    )
    admin_role_arns: list[RoleArn] = Field(
        default_factory=list,
        description="IAM role ARNs given cluster-admin through EKS access entries.",
    )
    view_role_arns: list[RoleArn] = Field(
        default_factory=list,
        description="IAM role ARNs given read-only access (AmazonEKSViewPolicy), e.g. the CI "
        "role that runs `pulumi preview`.",
    )
    deployer_admin: bool = Field(
        True,
        description="Give the identity that runs `pulumi up` cluster-admin through its own "
        "access entry (it installs the charts and the endpoint; the cluster is created without "
        "the implicit creator admin). Set false if that role is in adminRoleArns, or for a "
        "cluster created before this key existed (its creator already has an entry).",
    )


class InstanceGroupConfig(_Model):
    instance_type: InstanceType = Field(description="HyperPod instance type, e.g. ml.p5.48xlarge.")
    instance_count: int = Field(
        ge=1, le=6758, description="Number of instances in the group (1 to 6758, the API's limit)."
    )
    role: Role = Field(
        description="What runs on the group: 'prefill' or 'decode' DPD workers (GPU, EFA, in "
        "availabilityZoneId), or 'system' (operators; x86_64)."
    )
    training_plan_arn: Annotated[str, _matching(TRAINING_PLAN_PATTERN)] | None = Field(
        None, description="SageMaker training plan that reserves the group's capacity."
    )
    ebs_volume_size_gb: int = Field(
        500, ge=1, le=16384, description="Extra EBS volume per instance, in GB."
    )
    image_release_version: Annotated[str, _matching(SEMVER_PATTERN)] | None = Field(
        None,
        description="HyperPod AMI release (MAJOR.MINOR.PATCH: NVIDIA driver, EFA, kubelet). "
        "Unset: the latest at creation, kept until you set one; changing it updates the "
        "group's software (UpdateClusterSoftware).",
    )
    auto_patch: Literal["WhenIdle", "WhenAllIdle"] | None = Field(
        None,
        description="HyperPod automatic AMI patching of the group. Unset (the default): no "
        "automatic patching, so serving nodes change only when imageReleaseVersion does.",
    )


class InferenceOperatorConfig(_Model):
    version: Annotated[str, _matching(OPERATOR_VERSION_PATTERN)] = Field(
        "3.3", description="HyperPod Inference Operator version; DPD needs 3.2 or newer."
    )
    addon_version: Annotated[str, _matching(ADDON_VERSION_PATTERN)] = Field(
        "v1.4.0-eksbuild.1",
        description="Version of the amazon-sagemaker-hyperpod-inference EKS add-on "
        "(v1.4.0 carries operator 3.3).",
    )


class ObservabilityConfig(_Model):
    enabled: bool = Field(
        True,
        description="Install Amazon Managed Prometheus/Grafana and the HyperPod observability "
        "add-on.",
    )


class CheckpointConfig(_Model):
    source: str = Field(
        "hf://meta-llama/Llama-3.3-70B-Instruct",
        min_length=1,
        description="Where the model comes from: hf://org/model, s3://bucket/prefix, or a local "
        "directory.",
    )
    revision: str | None = Field(
        None,
        description="Source revision. For hf:// sources a 40-hex commit SHA (required: a branch "
        "name can move under a running endpoint).",
    )
    prefix: KeyPrefix | None = Field(
        None,
        description="Key prefix in the model bucket. Default: models/<org>/<model>/<revision>, so "
        "a new revision never overwrites a served one.",
    )
    bucket_name: BucketName | None = Field(
        None, description="Model bucket name. Default: generated by Pulumi."
    )
    staging: Literal["job", "manual"] = Field(
        "job",
        description="'job': `pulumi up` stages the checkpoint with an in-cluster Job (hf:// and "
        "s3:// sources); 'manual': you run `hyperpod-dpd checkpoint upload` first (local "
        "directories).",
    )
    retain_bucket_on_delete: bool = Field(
        True,
        description="Keep the model bucket (and its checkpoints) when the stack is destroyed.",
    )

    @property
    def effective_prefix(self) -> str:
        """Where the checkpoint lands in the bucket, without leading or trailing '/'."""
        if self.prefix:
            return self.prefix.strip("/")
        if self.source.startswith("hf://"):
            name = self.source.removeprefix("hf://")
        else:
            name = self.source.rstrip("/").rsplit("/", 1)[-1] or "model"
        return "/".join(p for p in ("models", name, self.revision) if p)


class RoleConfig(_Model):
    replicas: int = Field(1, ge=1, description="Worker replicas of the role.")
    args: list[str] = Field(
        default_factory=list,
        description="Extra vLLM flags for the role (replace the same flag in the shared args).",
    )
    max_num_seqs: int = Field(ge=1, description="vLLM --max-num-seqs for the role.")


class PrefillConfig(RoleConfig):
    max_num_seqs: int = Field(16, ge=1, description="vLLM --max-num-seqs on the prefiller.")


class DecodeConfig(RoleConfig):
    max_num_seqs: int = Field(32, ge=1, description="vLLM --max-num-seqs on the decoder.")


class ColocatedConfig(_Model):
    """vLLM's chunked-prefill knobs for colocated mode: the tuned baseline DPD must beat."""

    max_num_batched_tokens: int | None = Field(
        None,
        ge=1,
        description="Colocated mode only: vLLM --max-num-batched-tokens, the token budget of one "
        "engine step. Smaller means long prefills are cut into more chunks and interfere less "
        "with decoding (lower TPOT, higher TTFT). Default: vLLM's own.",
    )
    max_num_partial_prefills: int | None = Field(
        None,
        ge=1,
        description="Colocated mode only: vLLM --max-num-partial-prefills, prompts that may be "
        "prefilled in chunks at once. Default: vLLM's own (1).",
    )
    long_prefill_token_threshold: int | None = Field(
        None,
        ge=1,
        description="Colocated mode only: vLLM --long-prefill-token-threshold, prompts longer "
        "than this count as long for partial prefills. Default: vLLM's own.",
    )

    def settings(self) -> list[tuple[str, str, int]]:
        """(vLLM flag, config key under endpoint.colocated, value) of each knob that is set."""
        return [
            ("--" + name.replace("_", "-"), field.alias or name, getattr(self, name))
            for name, field in type(self).model_fields.items()
            if getattr(self, name) is not None
        ]

    def flags(self) -> list[str]:
        """The vLLM flags these settings stand for, in the fields' order (each field is named
        after its flag)."""
        return [part for flag, _, value in self.settings() for part in (flag, str(value))]

    def describe(self) -> str:
        flags = self.flags()
        return " ".join(flags) if flags else "vLLM defaults"


class EndpointConfig(_Model):
    name: DnsLabel = Field(
        "llama-3-3-70b", description="InferenceEndpointConfig name (a DNS-1123 label)."
    )
    namespace: Namespace = Field("default", description="Kubernetes namespace of the endpoint.")
    mode: Literal["dpd", "colocated"] = Field(
        "dpd",
        description="'dpd': disaggregated prefill and decode (pdSpec); 'colocated': one worker "
        "pool, the A/B baseline and rollback path.",
    )
    model: str = Field(
        "llama-3.3-70b",
        min_length=1,
        description="Model used for sizing: a built-in catalog name or a path to a Hugging Face "
        "config.json.",
    )
    image: str = Field(
        DEFAULT_IMAGE,
        min_length=1,
        description="Worker image (vLLM + LMCache + NIXL + EFA libfabric), same for both roles.",
    )
    image_dpd_capable: bool = Field(
        False,
        description="Mark a custom image as DPD-capable (vLLM + LMCache + NIXL + EFA libfabric); "
        "the image policy accepts only the two documented images otherwise.",
    )
    tensor_parallel_size: int = Field(8, ge=1, description="vLLM --tensor-parallel-size.")
    max_model_len: int = Field(16384, ge=1, description="vLLM --max-model-len, in tokens.")
    gpu_memory_utilization: float = Field(
        0.75, gt=0, le=1, description="vLLM --gpu-memory-utilization (0 < x <= 1)."
    )
    routing_threshold: int = Field(
        4096,
        ge=0,
        description="Prompts longer than this many tokens take the disaggregated path.",
    )
    routing_strategy: Literal["prefixaware", "kvaware", "session", "roundrobin"] = Field(
        "prefixaware", description="How the router picks a prefiller."
    )
    pd_buffer_size: ByteSize = Field(
        DEFAULT_PD_BUFFER_SIZE,
        description="PD_BUFFER_SIZE: decoder GPU buffer for incoming KV per TP rank, in bytes "
        "or as '8GiB'.",
    )
    prefill: PrefillConfig = Field(default_factory=PrefillConfig)
    decode: DecodeConfig = Field(default_factory=DecodeConfig)
    colocated: ColocatedConfig = Field(
        default_factory=ColocatedConfig,
        description="Chunked-prefill tuning of colocated mode (ignored in dpd mode, so one stack "
        "file gives all three benchmark configurations).",
    )
    environment_variables: dict[EnvName, EnvValue | None] = Field(
        default_factory=dict,
        description="Environment variables for both roles; a name here overrides the DPD "
        "default of that name, null removes it.",
    )
    expected_prompt_tokens: int | None = Field(
        None, ge=1, description="Typical prompt length, for PD buffer sizing checks."
    )
    expected_in_flight_transfers: int | None = Field(
        None, ge=1, description="KV transfers expected in flight at once, for PD buffer sizing."
    )


class CostConfig(_Model):
    hourly_prices: dict[str, Annotated[float, Field(ge=0)]] = Field(
        default_factory=dict,
        description="Hourly USD price overrides for the plan's cost estimate, keyed like "
        "hyperpod_dpd/shared/prices.yaml (instance types, eks-control-plane, nat-gateway).",
    )


PolicyLevel = Literal["mandatory", "advisory", "disabled"]


class PolicyConfig(_Model):
    enforcement: dict[str, PolicyLevel] = Field(
        default_factory=dict,
        description="Per-rule enforcement override, e.g. {hyperpod-dpd-shm-volume: mandatory}.",
    )
    advisories_mandatory: bool = Field(
        False, description="Treat every advisory rule as mandatory (stricter stacks, e.g. prod)."
    )


class StackSettings(_Model):
    """Every plain (non-secret) key of the `hyperpod-dpd:` namespace, plus `aws:region`."""

    region: Annotated[str, _matching(REGION_PATTERN)] = Field(
        description="aws:region: the Region of the cluster and the model bucket."
    )
    availability_zone_id: AzId = Field(
        description="The one AZ ID (e.g. use2-az2) of all GPU capacity: prefill and decode "
        "groups, their subnet and the endpoint's topology."
    )
    network: NetworkConfig = Field(
        description="VPC layout: vpcCidr, controlPlaneAzIds (required), natGateways."
    )
    eks: EksConfig = Field(
        default_factory=EksConfig,
        description="EKS control plane: kubernetesVersion, publicAccessCidrs, adminRoleArns.",
    )
    instance_groups: dict[GroupName, InstanceGroupConfig] = Field(
        description="HyperPod instance groups keyed by name (stable addresses)."
    )
    inference_operator: InferenceOperatorConfig = Field(
        default_factory=InferenceOperatorConfig,
        description="HyperPod Inference Operator: version and the EKS add-on version carrying it.",
    )
    observability: ObservabilityConfig = Field(
        default_factory=ObservabilityConfig,
        description="Metrics and dashboards (TTFT, TPOT, KV transfer time): enabled.",
    )
    checkpoint: CheckpointConfig = Field(
        default_factory=CheckpointConfig,
        description="Model checkpoint staged into S3: source, revision, prefix, bucketName.",
    )
    cost: CostConfig = Field(
        default_factory=CostConfig,
        description="Cost estimate settings: hourlyPrices overrides.",
    )
    policy: PolicyConfig = Field(
        default_factory=PolicyConfig,
        description="Policy enforcement: per-rule overrides (enforcement), advisoriesMandatory.",
    )
    endpoint: EndpointConfig = Field(
        default_factory=EndpointConfig,
        description="The InferenceEndpointConfig: mode (dpd|colocated), model, image, vLLM and "
        "routing settings, PD buffer, per-role prefill/decode settings.",
    )
    protect: bool = Field(
        False,
        description="Pulumi-protect the stateful resources (EKS cluster, HyperPod cluster, model "
        "bucket): `pulumi destroy` and replacements stop until you set it false and `pulumi up`.",
    )

    def groups_with_role(self, role: str) -> dict[str, InstanceGroupConfig]:
        return {name: g for name, g in self.instance_groups.items() if g.role == role}

    def instance_type_for(self, role: str) -> str:
        """The instance type serving `role` (the first group's, by name; any GPU group's when
        no group has the role, as in colocated mode)."""
        groups = self.groups_with_role(role) or self.gpu_groups
        return groups[sorted(groups)[0]].instance_type

    @property
    def gpu_groups(self) -> dict[str, InstanceGroupConfig]:
        return {n: g for n, g in self.instance_groups.items() if g.role in GPU_ROLES}


def _is_object(annotation: Any) -> bool:
    return get_origin(annotation) is dict or (
        isinstance(annotation, type) and issubclass(annotation, BaseModel)
    )


# Top-level keys whose values are YAML objects (Pulumi hands them to the program as JSON text).
OBJECT_KEYS = frozenset(
    f.alias for f in StackSettings.model_fields.values() if _is_object(f.annotation)
)
# Top-level boolean keys: Pulumi hands them to the program as the text "true" / "false".
BOOL_KEYS = frozenset(f.alias for f in StackSettings.model_fields.values() if f.annotation is bool)
# Keys that must be Pulumi secrets; they never enter StackSettings.
SECRET_KEYS = frozenset({"hfToken"})
