"""The inference endpoint: its mode, model, image, vLLM and routing settings, PD buffer and per-role
settings, and the checks of its derived names and chunked-prefill knobs."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from core.problems import ConfigProblem
from core.sizing.kv_cache import (
    DOCS_GPU_MEMORY_UTILIZATION,
    DOCS_MAX_MODEL_LEN,
    DOCS_PD_BUFFER_BYTES,
    DOCS_PROMPT_TOKENS,
)
from core.units import INT32_MAX
from core.versions import DLC_VLLM_IMAGE
from core.vocabulary import ALB_IDLE_TIMEOUT_MAX, ROUTER_SERVICE
from settings.checkpoint import EndpointCheckpoint
from settings.config.errors import full_key, set_fix
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
from settings.endpoint.slo import OptionalSlo

DEFAULT_IMAGE = DLC_VLLM_IMAGE


class RoleConfig(SettingsModel):
    replicas: int = Field(1, ge=1, description="Worker replicas of the role.")
    tensor_parallel_size: int | None = Field(
        None,
        ge=1,
        description="vLLM --tensor-parallel-size of the role (a parallelism per phase). "
        "Default: the endpoint's tensorParallelSize.",
    )
    args: list[str] = Field(
        default_factory=list,
        description="Extra vLLM flags for the role (replace the same flag in the shared args). "
        "A number given here (--max-model-len, --gpu-memory-utilization, "
        "--tensor-parallel-size, --max-num-seqs...) is bounded as its own key is (maxModelLen, "
        "...), and is the number the plan sizes, judges and shows.",
    )
    max_num_seqs: int = Field(ge=1, description="vLLM --max-num-seqs for the role.")


class PrefillConfig(RoleConfig):
    max_num_seqs: int = Field(16, ge=1, description="vLLM --max-num-seqs on the prefiller.")


class DecodeConfig(RoleConfig):
    max_num_seqs: int = Field(32, ge=1, description="vLLM --max-num-seqs on the decoder.")


class ColocatedConfig(SettingsModel):
    """vLLM's chunked-prefill knobs for colocated mode: the tuned baseline DPD must beat."""

    max_num_batched_tokens: int | None = Field(
        None,
        ge=1,
        description="Colocated mode only: vLLM --max-num-batched-tokens, the token budget of one "
        "engine step. Smaller means long prefills are cut into more chunks and interfere less "
        "with decoding (lower TPOT, higher TTFT). At most what one step's activations leave "
        "room for beside the weights and one maxModelLen sequence of KV cache (the refusal "
        "names the number). Default: vLLM's own.",
        examples=[2048],
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
        examples=[2048],
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


ScalingMetric = Literal[
    "waiting-requests", "running-requests", "kv-cache-usage", "prompt-tokens-per-second"
]


class RecordedCapacity(SettingsModel):
    """What `hyperpod-dpd advise` recorded one replica of a pool holds within the SLO (written by
    `advise --write` beside the target it derived): the plan judges a target against it without
    simulating anything."""

    metric: ScalingMetric = Field(
        description="The signal the capacity is measured in.", examples=["running-requests"]
    )
    per_replica: Decimal = Field(
        gt=0,
        description="The load one replica holds within the SLO, in the metric's unit: a target "
        "above it is an advisory in the plan.",
        examples=[24],
    )
    within: str = Field(
        min_length=1,
        description="The SLO, workload and source it was derived from (e.g. 'TPOT p50 <= 15 ms "
        "at ISL 4096 / OSL 256, aisimulate 0.13.0'), for the advisory's message.",
        examples=["TPOT p50 <= 15 ms at ISL 4096 / OSL 256"],
    )


class PoolRatio(SettingsModel):
    """A DPD layout's prefill:decode ratio, kept while both pools scale: the larger pool never
    falls below its share of the other's replicas."""

    prefill: int = Field(ge=1, description="Prefill replicas of the layout's unit.", examples=[1])
    decode: int = Field(ge=1, description="Decode replicas of the layout's unit.", examples=[1])

    @property
    def follower(self) -> str:
        """The pool held at its share of the other's: decode, unless prefill has more."""
        return "prefill" if self.prefill > self.decode else "decode"

    @property
    def leader(self) -> str:
        return "decode" if self.follower == "prefill" else "prefill"

    def share(self, pool: str) -> int:
        return self.prefill if pool == "prefill" else self.decode


class ScalingConfig(SettingsModel):
    """One pool's autoscaling (KEDA, through the operator's autoScalingSpec): between
    minReplicas and maxReplicas on one Prometheus signal of the stack's workspace."""

    min_replicas: int = Field(
        1,
        ge=0,
        description="Replicas at the least (minReplicaCount). 0 only with a query of your own, or "
        "for an endpoint with weight 0 in traffic: a metric is read from the pool's own pods, so "
        "with none the pool never scales up again.",
    )
    max_replicas: int = Field(ge=1, description="Replicas at the most (maxReplicaCount).")
    metric: ScalingMetric | None = Field(
        None,
        description="A vLLM signal by name: waiting-requests (queued prompts: prefill), "
        "prompt-tokens-per-second (prefill: vLLM's prompt tokens processed, as a rate), "
        "running-requests or kv-cache-usage (decode; vLLM's KV cache usage, a fraction from 0 "
        "to 1), over the pool's own pods. Or give query.",
    )
    query: str | None = Field(
        None,
        min_length=1,
        description="A PromQL query of your own, instead of metric: it must parse and return "
        "one series (an aggregation without by/without, e.g. sum(...)), as KEDA reads it.",
    )
    target: Decimal = Field(
        gt=0,
        description="The value per replica the scaler holds the signal at (kv-cache-usage: "
        "the fraction to hold, below 1, e.g. 0.8).",
        examples=[16],
    )
    # Both reach int32 fields of the IEC (the API server refuses more than INT32_MAX).
    cooldown_seconds: int = Field(
        300,
        ge=0,
        le=INT32_MAX,
        description="Seconds after the last trigger before scaling in (cooldownPeriod).",
    )
    scale_down_stabilization_seconds: int = Field(
        300, ge=0, le=INT32_MAX, description="Seconds of lower demand before removing replicas."
    )
    capacity: RecordedCapacity | None = Field(
        None,
        description="What `hyperpod-dpd advise --write` recorded one replica holds within the "
        "SLO (metric, perReplica, within): a target above perReplica is an advisory.",
    )


class AutoscalingConfig(ScalingConfig):
    """A colocated endpoint's autoscaling (the fields of ScalingConfig), or a DPD endpoint's per
    role (prefill, decode: each a ScalingConfig of its own)."""

    max_replicas: int | None = Field(None, ge=1, description="Colocated: maxReplicaCount.")
    target: Decimal | None = Field(
        None, gt=0, description="Colocated: the target per replica.", examples=[16]
    )
    prefill: ScalingConfig | None = Field(None, description="DPD: the prefill pool's.")
    decode: ScalingConfig | None = Field(None, description="DPD: the decode pool's.")
    ratio: PoolRatio | None = Field(
        None,
        description="DPD, both pools autoscaled: the layout's prefill:decode ratio (prefill, "
        "decode). The larger pool (decode on a tie) never falls below its share of the other's "
        "replicas: a second trigger of its own counts the other pool's pods.",
    )


class CacheConfig(SettingsModel):
    """The operator's model caches (spec.modelCacheConfig, operator 3.3 and newer: AWS model
    caching page, sagemaker-hyperpod-model-deployment-model-caching).

    Nothing more is rendered to warm nodes before a first pod (core/cold_start.py, "Which
    start"): the operator warms its own per-deployment cache beside the pods, not before them;
    a standalone ModelWeightsCacheConfig has a cache directory and node label of its own that
    no IEC field points to; modelSourceConfig.prefetchEnabled copies the weights from the same
    S3 mount into RAM before the worker starts, which adds a step rather than removing one."""

    weights: bool = Field(
        False,
        description="Operator >= 3.3: keep the staged weights on the nodes' instance-store NVMe "
        "(modelCacheConfig.weightsCache, at /opt/dlami/nvme): a new pod on a warm node reads "
        "them locally instead of from S3. Needs an instance type with NVMe instance store, big "
        "enough for every cached endpoint that may run on it (each keeps its own directory).",
    )
    image: bool = Field(
        False,
        description="Operator >= 3.3: pre-pull the worker image on the pools' nodes "
        "(modelCacheConfig.imageCache), so a new pod skips the image pull.",
    )


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


def check_derived_names(
    e: EndpointConfig, path: tuple[str, ...] = ("endpoint",)
) -> list[ConfigProblem]:
    """Names the operator derives from the endpoint's must be valid Kubernetes names too."""
    derived = ROUTER_SERVICE.format(name=e.name, namespace=e.namespace)
    if len(derived) <= 63:
        return []
    room = 63 - len(ROUTER_SERVICE.format(name="", namespace=""))
    key = full_key((*path, "name"))
    return [
        ConfigProblem(
            key,
            e.name,
            f"a name that, with namespace '{e.namespace}', gives the router Service the operator "
            f"creates a name of at most 63 characters ('{derived}' has {len(derived)}): name and "
            f"namespace together at most {room} characters",
            f"shorten {key} or {full_key((*path, 'namespace'))}",
        )
    ]


def check_colocated(
    e: EndpointConfig, path: tuple[str, ...] = ("endpoint",)
) -> list[ConfigProblem]:
    """The chunked-prefill knobs: each flag set in one place only (the step budget against the
    batch the worker runs is settings/endpoint/number_checks.py's, at the effective --max-num-seqs)."""
    c = e.colocated
    problems = []
    for flag, field, value in c.settings():
        if any(a.split("=")[0] == flag for a in e.decode.args):
            key = full_key((*path, "colocated", field))
            decode_args = full_key((*path, "decode", "args"))
            problems.append(ConfigProblem(
                key, value, f"{flag} given once ({decode_args.partition(':')[2]} also sets it)",
                f"keep {key} and remove {flag} from {decode_args}",
            ))  # fmt: skip
    return problems


# Variables the operator or NVIDIA's device plugin sets on the worker pods: a value here would
# fight theirs (the GPUs a pod was given, the model path, the port).
OWNED_ENVIRONMENT = frozenset(
    {
        "CUDA_VISIBLE_DEVICES",
        "NVIDIA_VISIBLE_DEVICES",
        "NVIDIA_DRIVER_CAPABILITIES",
        "NVIDIA_REQUIRE_CUDA",
        "NEURON_RT_VISIBLE_CORES",
        "HOSTNAME",
        "KUBERNETES_SERVICE_HOST",
        "KUBERNETES_SERVICE_PORT",
        "POD_NAME",
        "POD_NAMESPACE",
    }
)
HASH_SEED_MAX = 4294967295  # Python: PYTHONHASHSEED is "random" or 0..4294967295


def check_worker_inputs(
    e: EndpointConfig, path: tuple[str, ...] = ("endpoint",)
) -> list[ConfigProblem]:
    """Environment the pods' owners set, a hash seed Python accepts and that is fixed (LMCache
    keys hash with it), a name the operator's Service can take (DNS-1035: it starts with a
    letter). PD_BUFFER_SIZE is a number: settings/endpoint/numbers.py parses it as pdBufferSize."""
    problems = []
    env_key = full_key((*path, "environmentVariables"))
    for name in sorted(set(e.environment_variables) & OWNED_ENVIRONMENT):
        problems.append(ConfigProblem(
            f"{env_key}.{name}", e.environment_variables[name],
            "no variable the operator or the GPU device plugin sets on the pods",
            f"remove {name} from {env_key}",
        ))  # fmt: skip
    seed = e.environment_variables.get("PYTHONHASHSEED")
    # "random" is Python's own word: the hash-seed policy judges it (a mandatory rule).
    if seed not in (None, "random") and not (seed.isdigit() and int(seed) <= HASH_SEED_MAX):
        problems.append(ConfigProblem(
            f"{env_key}.PYTHONHASHSEED", seed,
            f"what Python accepts: a seed from 0 to {HASH_SEED_MAX} (fixed and the same on both "
            "roles: LMCache keys use Python's hash())",
            f"set {env_key}.PYTHONHASHSEED to \"0\" (the DPD docs' value), or remove it",
        ))  # fmt: skip
    if not e.name[:1].isalpha():
        key = full_key((*path, "name"))
        problems.append(ConfigProblem(
            key, e.name,
            "a name starting with a letter (the operator names Services after it, and a "
            "Service name is a DNS-1035 label)",
            f"prefix it, e.g. {set_fix(key, 'llm-' + e.name)}",
        ))  # fmt: skip
    return problems
