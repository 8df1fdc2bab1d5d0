"""The inference endpoint's typed keys: its mode, model, image, vLLM and routing settings, PD
buffer, per-role settings, autoscaling, caches and SLO (each nested model in the module of its
concern)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from core.sizing.kv_cache import (
    DOCS_GPU_MEMORY_UTILIZATION,
    DOCS_MAX_MODEL_LEN,
    DOCS_PD_BUFFER_BYTES,
    DOCS_PROMPT_TOKENS,
)
from core.versions import DLC_VLLM_IMAGE
from core.vocabulary import ALB_IDLE_TIMEOUT_MAX
from settings.checkpoint import EndpointCheckpoint
from settings.config.fields import (
    ByteSize,
    Decimal,
    DnsLabel,
    EnvName,
    EnvValue,
    GroupName,
    ImageReference,
    Namespace,
    SettingsModel,
)
from settings.endpoint.autoscaling import AutoscalingConfig
from settings.endpoint.caches import CacheConfig
from settings.endpoint.roles import ColocatedConfig, DecodeConfig, PrefillConfig
from settings.endpoint.slo import OptionalSlo

DEFAULT_IMAGE = DLC_VLLM_IMAGE


class EndpointConfig(SettingsModel):
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
    checkpoint: EndpointCheckpoint | None = Field(
        None,
        description="This endpoint's own checkpoint (source, revision, prefix), staged once per "
        "distinct source and revision under its own prefix. Default: hyperpod-dpd:checkpoint.",
    )
    image: ImageReference = Field(
        DEFAULT_IMAGE,
        description="Worker image (vLLM + LMCache + NIXL + EFA libfabric), same for both roles. "
        "Pin it by digest as repo:tag@sha256:<64 hex>, the tag kept for readers and the image "
        "policies (`hyperpod-dpd fetch --stack <stack>` prints it).",
    )
    image_dpd_capable: bool = Field(
        False,
        description="Mark a custom image as DPD-capable (vLLM + LMCache + NIXL + EFA libfabric); "
        "the image policy accepts only the two documented images otherwise.",
    )
    tensor_parallel_size: int = Field(8, ge=1, description="vLLM --tensor-parallel-size.")
    replicas: int | None = Field(
        None,
        ge=1,
        description="Colocated mode only: worker replicas (one node each). Default: prefill."
        "replicas + decode.replicas, the GPU budget of DPD's two pools (a fair A/B).",
    )
    max_model_len: int = Field(
        DOCS_MAX_MODEL_LEN, ge=1, description="vLLM --max-model-len, in tokens."
    )
    gpu_memory_utilization: Decimal = Field(
        DOCS_GPU_MEMORY_UTILIZATION,
        gt=0,
        le=1,
        description="vLLM --gpu-memory-utilization (0 < x <= 1).",
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
        DOCS_PD_BUFFER_BYTES,
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
        "default of that name, null removes it. PD_BUFFER_SIZE is taken as pdBufferSize is (a "
        "size such as '8GiB', rendered in bytes; not null) and is the buffer the plan sizes.",
    )
    expected_prompt_tokens: int | None = Field(
        None,
        ge=1,
        description="Typical prompt length, for PD buffer sizing checks.",
        examples=[DOCS_PROMPT_TOKENS],
    )
    expected_in_flight_transfers: int | None = Field(
        None,
        ge=1,
        description="KV transfers expected in flight at once, for PD buffer sizing.",
        examples=[32],
    )
    groups: list[GroupName] | None = Field(
        None,
        description="Instance group keys the endpoint runs on (at most one per role), when "
        "several endpoints share a role. Default: every group of its roles.",
    )
    idle_timeout_seconds: int = Field(
        ALB_IDLE_TIMEOUT_MAX,
        ge=1,
        le=ALB_IDLE_TIMEOUT_MAX,
        description="Seconds the load balancers in front of the endpoint keep a connection that "
        "carries no byte (the traffic split's ALB, at the longest of its endpoints', and the "
        "operator's, through loadBalancer.idleTimeoutSeconds from operator 3.3). A non-streaming "
        "request sends nothing until its whole generation (up to maxModelLen tokens) is done, "
        "and gets a 504 past this. 1 to 4000. Default: 4000, the ALB's most: how long a "
        "generation takes depends on the load, so nothing shorter is safe for every request.",
    )
    autoscaling: AutoscalingConfig | None = Field(
        None,
        description="Colocated: minReplicas, maxReplicas, metric or query, target. DPD: the same "
        "per role under prefill and decode. Unset: fixed replicas.",
    )
    cache: CacheConfig = Field(
        default_factory=CacheConfig,
        description="The operator's caches (3.3 and newer), for a faster pod start: weights "
        "(on the nodes' NVMe) and image (pre-pulled). Default: both off.",
    )
    slo: OptionalSlo = Field(
        None,
        description="Service level objectives (ttftP50Ms, ttftP99Ms, itlP99Ms, errorRate, "
        "minRequests, baselineMargin): the endpoint's alert rules and `hyperpod-dpd canary` "
        "judge by them. Unset: hyperpod-dpd:slo, the stack's default.",
    )
