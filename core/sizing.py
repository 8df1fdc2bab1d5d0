"""PD buffer and GPU memory sizing for DPD, in the units LMCache and vLLM use.

Pure functions (no Pulumi, no I/O). The formulas reproduce the AWS DPD docs' numbers: Llama 3.3
70B at TP 8 moves 40,960 B of KV per token per rank; LMCache moves whole 256-token chunks, so a
6,035-token prompt is 24 chunks = 0.2344 GiB, and an 8 GiB PD_BUFFER_SIZE (819 whole chunks) holds
34 such transfers at once.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from core.catalog import GIB, MIB, InstanceSpec, ModelSpec, SizingError

# LMCache's default chunk_size: the unit it stores, sends and allocates the PD buffer in.
CHUNK_TOKENS = 256

# Assumption: GPU memory a worker uses outside vLLM's --gpu-memory-utilization share, per GPU:
# CUDA context (~0.5-1 GiB per process), NCCL communicator buffers, NIXL/UCX registration and
# cuBLAS workspaces allocated after vLLM's profiling. 2 GiB is a rounded-up estimate, not a
# measurement; it only moves the reported headroom.
OVERHEAD_BYTES = 2 * GIB

# Assumption: peak activation memory vLLM's profiling run reserves inside its share, per GPU. The
# prefiller runs long chunked-prefill batches (docs: higher utilization risks prefill OOM from
# activations), the decoder at most --max-num-seqs tokens per step plus its CUDA graph pool.
ACTIVATION_RESERVE_BYTES = {"prefill": 4 * GIB, "decode": 2 * GIB}

ROLES = ("prefill", "decode")


def kv_bytes_per_token_per_rank(model: ModelSpec, tp: int) -> int:
    """2 (K and V) x layers x KV heads on one rank x head_dim x bytes per element.

    With fewer KV heads than ranks vLLM replicates heads, so a rank holds at least one.
    """
    if tp < 1:
        raise SizingError("tp", tp, "must be at least 1", "Set it to the GPUs per replica.")
    heads_per_rank = math.ceil(model.num_kv_heads / tp)
    return 2 * model.num_layers * heads_per_rank * model.head_dim * model.bytes_per_element


def vllm_share_bytes(gpu_memory_bytes: int, utilization: float) -> int:
    """vLLM's share of one GPU at --gpu-memory-utilization, as vLLM computes it
    (vllm/v1/worker/utils.py, request_memory: ceil(total memory x utilization))."""
    return math.ceil(utilization * gpu_memory_bytes)


def weights_bytes_per_rank(model: ModelSpec, tp: int) -> int:
    """The model's weights on one of `tp` ranks (vLLM shards them evenly)."""
    return math.ceil(model.num_params * model.bytes_per_element / tp)


def chunk_bytes(kv_per_token: int, chunk_tokens: int = CHUNK_TOKENS) -> int:
    """Bytes of one LMCache chunk per rank (10 MiB for Llama 3.3 70B at TP 8)."""
    return chunk_tokens * kv_per_token


def chunks_for_tokens(tokens: int, chunk_tokens: int = CHUNK_TOKENS) -> int:
    """Whole chunks one transfer of `tokens` occupies: LMCache rounds up (6,035 -> 24)."""
    return math.ceil(tokens / chunk_tokens)


def transfer_bytes(tokens: int, kv_per_token: int) -> int:
    """Bytes one KV transfer of `tokens` takes in the PD buffer, per rank."""
    return chunks_for_tokens(tokens) * chunk_bytes(kv_per_token)


def buffer_chunks(buffer_bytes: int, kv_per_token: int) -> int:
    """Whole chunks the buffer holds: LMCache >= PR #2694 rounds the buffer down (8 GiB -> 819)."""
    return buffer_bytes // chunk_bytes(kv_per_token)


def is_chunk_multiple(buffer_bytes: int, kv_per_token: int) -> bool:
    """Older LMCache (before PR #2694) refuses a buffer that is not a whole number of chunks."""
    return buffer_bytes % chunk_bytes(kv_per_token) == 0


def transfers_that_fit(buffer_bytes: int, tokens: int, kv_per_token: int) -> int:
    """Transfers of `tokens` that fit in the buffer at once, counted in whole chunks (34)."""
    return buffer_chunks(buffer_bytes, kv_per_token) // chunks_for_tokens(tokens)


def transfers_unchunked(buffer_bytes: int, tokens: int, kv_per_token: int) -> float:
    """The docs' back-of-envelope figure, buffer / (tokens x bytes per token): 8 / 0.23 ~ 35."""
    return buffer_bytes / (tokens * kv_per_token)


def recommend_pd_buffer(
    prompt_tokens: int, in_flight: int, max_model_len: int, kv_per_token: int
) -> int:
    """PD_BUFFER_SIZE for `in_flight` transfers of `prompt_tokens`, rounded up to a whole GiB.

    Never less than one max-model-len transfer: a prompt the buffer cannot hold at all stalls
    the decoder ("Failed to allocate memory object, retrying...").
    """
    needed = max(in_flight * chunks_for_tokens(prompt_tokens), chunks_for_tokens(max_model_len))
    return math.ceil(needed * chunk_bytes(kv_per_token) / GIB) * GIB


def validate_tp(model: ModelSpec, instance: InstanceSpec, tp: int) -> None:
    """vLLM's constraints on --tensor-parallel-size within one node."""
    if tp < 1 or tp > instance.gpu_count:
        raise SizingError(
            "tp",
            tp,
            f"must be between 1 and the {instance.gpu_count} GPUs of one {instance.name}",
            "DPD roles run one replica per node: use 8 (or a divisor of the head count below it).",
        )
    if model.num_attention_heads % tp:
        allowed = [
            d for d in range(1, instance.gpu_count + 1) if model.num_attention_heads % d == 0
        ]
        raise SizingError(
            "tp",
            tp,
            f"does not divide {model.name}'s {model.num_attention_heads} attention heads",
            f"Use one of {', '.join(map(str, allowed))}.",
        )
    if model.num_kv_heads % tp and tp % model.num_kv_heads:
        raise SizingError(
            "tp",
            tp,
            f"neither divides nor is a multiple of {model.name}'s {model.num_kv_heads} KV heads",
            "vLLM shards or replicates KV heads evenly: use a divisor or multiple of that count.",
        )


@dataclass(frozen=True)
class RoleBudget:
    """Memory of one GPU of a prefill or decode worker, in bytes."""

    role: str
    gpu_memory_bytes: int
    vllm_share_bytes: int
    weights_bytes: int
    activation_reserve_bytes: int
    kv_cache_bytes: int  # negative: the weights do not fit in vLLM's share
    kv_cache_tokens: int  # tokens of KV one replica holds (every rank holds its slice of each)
    pd_buffer_bytes: int
    overhead_bytes: int
    headroom_bytes: int  # negative: the worker will not fit in GPU memory


def role_budget(
    role: str,
    model: ModelSpec,
    instance: InstanceSpec,
    tp: int,
    gpu_memory_utilization: float,
    pd_buffer_bytes: int,
) -> RoleBudget:
    """Where one GPU's memory goes. The PD buffer is the decoder's receive buffer (per rank),
    allocated by LMCache outside vLLM's share; the prefiller gets none here."""
    gpu = instance.gpu_memory_bytes
    share = vllm_share_bytes(gpu, gpu_memory_utilization)
    weights = weights_bytes_per_rank(model, tp)
    activations = ACTIVATION_RESERVE_BYTES[role]
    kv_room = share - weights - activations
    buffer = pd_buffer_bytes if role == "decode" else 0
    return RoleBudget(
        role=role,
        gpu_memory_bytes=gpu,
        vllm_share_bytes=share,
        weights_bytes=weights,
        activation_reserve_bytes=activations,
        kv_cache_bytes=kv_room,
        kv_cache_tokens=max(kv_room, 0) // kv_bytes_per_token_per_rank(model, tp),
        pd_buffer_bytes=buffer,
        overhead_bytes=OVERHEAD_BYTES,
        headroom_bytes=gpu - (share + buffer + OVERHEAD_BYTES),
    )


@dataclass(frozen=True)
class SizingReport:
    """Every number of one sizing run; `to_json()` is what `hyperpod-dpd size` prints."""

    model: str
    hf_id: str
    moe: bool
    instance_type: str
    gpu_model: str
    gpus_per_node: int
    tensor_parallel_size: int
    kv_bytes_per_token_per_rank: int
    chunk_tokens: int
    chunk_bytes: int
    prompt_tokens: int
    prompt_chunks: int
    transfer_bytes: int
    transfer_gib: float  # rounded to 4 decimals like the decoder's "size: 0.2344 gb" log line
    pd_buffer_bytes: int
    pd_buffer_chunks: int
    pd_buffer_is_chunk_multiple: bool
    transfers_in_flight: int
    transfers_in_flight_unchunked: float
    max_model_len: int
    max_model_len_chunks: int
    expected_in_flight: int | None
    recommended_pd_buffer_bytes: int | None
    gpu_memory_utilization: float
    prefill: RoleBudget
    decode: RoleBudget
    warnings: list[str] = field(default_factory=list)
    assumptions: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """camelCase keys, like the plan's JSON and the Kubernetes manifests."""
        return _camel(asdict(self))


def _camel(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            re.sub(r"_(\w)", lambda m: m.group(1).upper(), k): _camel(v) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_camel(v) for v in value]
    return value


def size(
    model: ModelSpec,
    instance: InstanceSpec,
    tp: int = 8,
    prompt_tokens: int = 6035,
    pd_buffer_bytes: int = 8 * GIB,
    gpu_memory_utilization: float = 0.75,
    max_model_len: int = 16384,
    in_flight: int | None = None,
) -> SizingReport:
    """Size the PD buffer and both roles' GPU memory; SizingError names the bad input."""
    _check_inputs(prompt_tokens, pd_buffer_bytes, gpu_memory_utilization, max_model_len, in_flight)
    validate_tp(model, instance, tp)
    kv = kv_bytes_per_token_per_rank(model, tp)
    fit = transfers_that_fit(pd_buffer_bytes, prompt_tokens, kv)
    budgets = {
        r: role_budget(r, model, instance, tp, gpu_memory_utilization, pd_buffer_bytes)
        for r in ROLES
    }
    recommended = (
        recommend_pd_buffer(prompt_tokens, in_flight, max_model_len, kv) if in_flight else None
    )
    report = SizingReport(
        model=model.name,
        hf_id=model.hf_id,
        moe=model.moe,
        instance_type=instance.name,
        gpu_model=instance.gpu_model,
        gpus_per_node=instance.gpu_count,
        tensor_parallel_size=tp,
        kv_bytes_per_token_per_rank=kv,
        chunk_tokens=CHUNK_TOKENS,
        chunk_bytes=chunk_bytes(kv),
        prompt_tokens=prompt_tokens,
        prompt_chunks=chunks_for_tokens(prompt_tokens),
        transfer_bytes=transfer_bytes(prompt_tokens, kv),
        transfer_gib=round(transfer_bytes(prompt_tokens, kv) / GIB, 4),
        pd_buffer_bytes=pd_buffer_bytes,
        pd_buffer_chunks=buffer_chunks(pd_buffer_bytes, kv),
        pd_buffer_is_chunk_multiple=is_chunk_multiple(pd_buffer_bytes, kv),
        transfers_in_flight=fit,
        transfers_in_flight_unchunked=transfers_unchunked(pd_buffer_bytes, prompt_tokens, kv),
        max_model_len=max_model_len,
        max_model_len_chunks=chunks_for_tokens(max_model_len),
        expected_in_flight=in_flight,
        recommended_pd_buffer_bytes=recommended,
        gpu_memory_utilization=gpu_memory_utilization,
        prefill=budgets["prefill"],
        decode=budgets["decode"],
        assumptions={
            "overheadBytesPerGpu": OVERHEAD_BYTES,
            "prefillActivationReserveBytes": ACTIVATION_RESERVE_BYTES["prefill"],
            "decodeActivationReserveBytes": ACTIVATION_RESERVE_BYTES["decode"],
        },
    )
    report.warnings.extend(_warnings(report, model))
    return report


def _check_inputs(
    prompt_tokens: int,
    pd_buffer_bytes: int,
    utilization: float,
    max_model_len: int,
    in_flight: int | None,
) -> None:
    if max_model_len < 1:
        raise SizingError("max_model_len", max_model_len, "must be at least 1", "Use e.g. 16384.")
    if not 1 <= prompt_tokens <= max_model_len:
        raise SizingError(
            "prompt_tokens",
            prompt_tokens,
            f"must be between 1 and max-model-len ({max_model_len}); vLLM rejects longer prompts",
            "Use the typical prompt length of your traffic (docs' example: 6035).",
        )
    if pd_buffer_bytes < 1:
        raise SizingError("pd_buffer", pd_buffer_bytes, "must be positive", "Use e.g. 8GiB.")
    if not 0 < utilization <= 1:
        raise SizingError(
            "gpu_memory_utilization",
            utilization,
            "must be greater than 0 and at most 1",
            "Use the docs' default 0.75.",
        )
    if in_flight is not None and in_flight < 1:
        raise SizingError(
            "in_flight", in_flight, "must be at least 1", "Omit it or give the expected count."
        )


def _warnings(r: SizingReport, model: ModelSpec) -> list[str]:
    """Field problems the numbers predict (see reference/field-problems.md rows 9-11)."""
    out = []
    if r.pd_buffer_chunks < r.max_model_len_chunks:
        out.append(
            f"PD buffer holds {r.pd_buffer_chunks} chunks but one {r.max_model_len}-token prompt "
            f"needs {r.max_model_len_chunks}: the decoder stalls on long prompts; raise "
            "PD_BUFFER_SIZE (--pd-buffer)."
        )
    if r.expected_in_flight and r.expected_in_flight > r.transfers_in_flight:
        out.append(
            f"{r.expected_in_flight} transfers expected in flight but only "
            f"{r.transfers_in_flight} fit: decoder logs 'Failed to allocate memory object'; use "
            f"PD_BUFFER_SIZE {r.recommended_pd_buffer_bytes // GIB}GiB or more decode replicas."
        )
    room = r.decode.gpu_memory_bytes - r.decode.vllm_share_bytes - r.decode.overhead_bytes
    if r.recommended_pd_buffer_bytes and r.recommended_pd_buffer_bytes > room:
        out.append(
            f"the recommended {r.recommended_pd_buffer_bytes // GIB} GiB PD buffer does not fit "
            f"beside vLLM's share ({room / GIB:.2f} GiB left per GPU): lower the decoder's "
            "--gpu-memory-utilization or add decode replicas."
        )
    if not r.pd_buffer_is_chunk_multiple:
        out.append(
            f"PD_BUFFER_SIZE is not a multiple of the {r.chunk_bytes // MIB} MiB chunk: LMCache "
            f"rounds it down to {r.pd_buffer_chunks} chunks (before PR #2694 it refused to start)."
        )
    for b in (r.prefill, r.decode):
        if b.kv_cache_bytes <= 0:
            out.append(
                f"{b.role}: weights and activations exceed vLLM's share; no room for KV cache: "
                "raise --gpu-memory-utilization, --tp or pick a larger-GPU instance."
            )
        if b.headroom_bytes < 0:
            out.append(
                f"{b.role}: over GPU memory by {-b.headroom_bytes / GIB:.2f} GiB: lower "
                "--gpu-memory-utilization or PD_BUFFER_SIZE (--pd-buffer)."
            )
    if model.moe or model.num_params < 70e9:
        out.append(
            f"{model.name} is {'an MoE' if model.moe else 'a sub-70B'} model: the docs recommend "
            "DPD for dense 70B+ models; colocated serving may do as well."
        )
    return out


@dataclass(frozen=True)
class Fit:
    """Whether one worker's GPU can hold it, and the --gpu-memory-utilization values that work.

    vLLM's share (utilization x GPU memory) must hold the weights, the activation reserve and the
    KV cache of at least one --max-model-len sequence (vLLM refuses to start otherwise); what is
    left beside the share must hold the PD buffer (decoder) and the overhead."""

    need_bytes: int  # inside vLLM's share
    outside_bytes: int  # beside it: PD buffer + overhead
    gpu_memory_bytes: int
    lowest: float  # the smallest utilization that holds need_bytes (2 decimals, rounded up)
    highest: float  # the largest that leaves outside_bytes free (2 decimals, rounded down)

    @property
    def possible(self) -> bool:
        return self.lowest <= self.highest

    def share(self, utilization: float) -> int:
        return vllm_share_bytes(self.gpu_memory_bytes, utilization)

    def holds(self, utilization: float) -> bool:
        """The share holds the worker: vLLM starts."""
        return self.share(utilization) >= self.need_bytes

    def leaves_room(self, utilization: float) -> bool:
        """What the share leaves holds the PD buffer and the overhead."""
        return self.share(utilization) + self.outside_bytes <= self.gpu_memory_bytes


def worker_fit(
    role: str,
    model: ModelSpec,
    instance: InstanceSpec,
    tp: int,
    max_model_len: int,
    pd_buffer_bytes: int,
    overhead_bytes: int = OVERHEAD_BYTES,
) -> Fit:
    gpu = instance.gpu_memory_bytes
    weights = weights_bytes_per_rank(model, tp)
    need = (
        weights
        + ACTIVATION_RESERVE_BYTES[role]
        + max_model_len * kv_bytes_per_token_per_rank(model, tp)
    )
    outside = (pd_buffer_bytes if role == "decode" else 0) + overhead_bytes
    return Fit(
        need_bytes=need,
        outside_bytes=outside,
        gpu_memory_bytes=gpu,
        lowest=math.ceil(need / gpu * 100) / 100,
        highest=math.floor((gpu - outside) / gpu * 100) / 100,
    )
