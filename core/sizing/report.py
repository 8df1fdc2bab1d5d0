"""The sizing report of a DPD endpoint: PD buffer and both roles' GPU memory, checked inputs
and the field problems the numbers predict (`hyperpod-dpd size`, the plan's summary).

Pure functions (no Pulumi, no I/O); the maths is in core/sizing/kv_cache.py and core/sizing/gpu_memory.py.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from core.sizing.catalog import GIB, InstanceSpec, ModelSpec, SizingError
from core.sizing.gpu_memory import ACTIVATION_RESERVE_BYTES, OVERHEAD_BYTES, RoleBudget, role_budget
from core.sizing.kv_cache import (
    CHUNK_TOKENS,
    DOCS_GPU_MEMORY_UTILIZATION,
    DOCS_MAX_MODEL_LEN,
    DOCS_PD_BUFFER_BYTES,
    DOCS_PROMPT_TOKENS,
    buffer_chunks,
    chunk_bytes,
    chunks_for_tokens,
    is_chunk_multiple,
    kv_bytes_per_token_per_rank,
    recommend_pd_buffer,
    transfer_bytes,
    transfers_that_fit,
    transfers_unchunked,
)
from core.vocabulary import DPD_ROLES


def tp_choices(model: ModelSpec, instance: InstanceSpec) -> list[int]:
    """The --tensor-parallel-size values vLLM takes for `model` within one node of `instance`:
    dividing the attention heads, and dividing or a multiple of the KV heads."""
    return [
        d
        for d in range(1, instance.gpu_count + 1)
        if not model.num_attention_heads % d
        and not (model.num_kv_heads % d and d % model.num_kv_heads)
    ]


def validate_tp(model: ModelSpec, instance: InstanceSpec, tp: int) -> None:
    """vLLM's constraints on --tensor-parallel-size within one node."""
    choices = tp_choices(model, instance)
    best = max(choices) if choices else None
    if tp < 1 or tp > instance.gpu_count:
        raise SizingError(
            "tp",
            tp,
            f"must be between 1 and the {instance.gpu_count} GPUs of one {instance.name}",
            f"A worker runs on one node: use {best} (or another of {', '.join(map(str, choices))}).",
            best,
        )
    if model.num_attention_heads % tp:
        raise SizingError(
            "tp",
            tp,
            f"does not divide {model.name}'s {model.num_attention_heads} attention heads",
            f"Use one of {', '.join(map(str, choices))}.",
            best,
        )
    if model.num_kv_heads % tp and tp % model.num_kv_heads:
        raise SizingError(
            "tp",
            tp,
            f"neither divides nor is a multiple of {model.name}'s {model.num_kv_heads} KV heads",
            "vLLM shards or replicates KV heads evenly: use a divisor or multiple of that count "
            f"({', '.join(map(str, choices))}).",
            best,
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
    prompt_tokens: int = DOCS_PROMPT_TOKENS,
    pd_buffer_bytes: int = DOCS_PD_BUFFER_BYTES,
    gpu_memory_utilization: float = DOCS_GPU_MEMORY_UTILIZATION,
    max_model_len: int = DOCS_MAX_MODEL_LEN,
    in_flight: int | None = None,
    prefill_gpu_memory_utilization: float | None = None,
) -> SizingReport:
    """Size the PD buffer and both roles' GPU memory (the prefiller's at its own utilization,
    when it runs another than the decoder's); SizingError names the bad input."""
    _check_inputs(prompt_tokens, pd_buffer_bytes, gpu_memory_utilization, max_model_len, in_flight)
    validate_tp(model, instance, tp)
    kv = kv_bytes_per_token_per_rank(model, tp)
    fit = transfers_that_fit(pd_buffer_bytes, prompt_tokens, kv)
    utilization = {"prefill": prefill_gpu_memory_utilization or gpu_memory_utilization}
    budgets = {
        r: role_budget(
            r, model, instance, tp, utilization.get(r, gpu_memory_utilization), pd_buffer_bytes
        )
        for r in DPD_ROLES
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
        raise SizingError(
            "max_model_len",
            max_model_len,
            "must be at least 1",
            f"Use e.g. {DOCS_MAX_MODEL_LEN}.",
            DOCS_MAX_MODEL_LEN,
        )
    if not 1 <= prompt_tokens <= max_model_len:
        raise SizingError(
            "prompt_tokens",
            prompt_tokens,
            f"must be between 1 and max-model-len ({max_model_len}); vLLM rejects longer prompts",
            f"Use the typical prompt length of your traffic (docs' example: {DOCS_PROMPT_TOKENS}).",
            min(DOCS_PROMPT_TOKENS, max(max_model_len, 1)),
        )
    if pd_buffer_bytes < 1:
        raise SizingError(
            "pd_buffer", pd_buffer_bytes, "must be positive", "Use e.g. 8GiB.", "8GiB"
        )
    if not 0 < utilization <= 1:
        raise SizingError(
            "gpu_memory_utilization",
            utilization,
            "must be greater than 0 and at most 1",
            f"Use the docs' default {DOCS_GPU_MEMORY_UTILIZATION}.",
            DOCS_GPU_MEMORY_UTILIZATION,
        )
    if in_flight is not None and in_flight < 1:
        raise SizingError(
            "in_flight", in_flight, "must be at least 1", "Omit it or give the expected count."
        )


def _warnings(r: SizingReport, model: ModelSpec) -> list[str]:
    """Field problems the numbers predict: a full PD buffer (LMCache/LMCache#1030, #1337, #1990,
    #2365; docs/troubleshooting.md#pd-buffer-full) and GPU memory the buffer and vLLM's share
    overrun. A buffer not in whole chunks is none (core/sizing/kv_cache.py buffer_in_chunks)."""
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
