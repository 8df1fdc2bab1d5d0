"""Where one GPU's memory goes in a prefill or decode worker, and the --gpu-memory-utilization
values a worker fits with.

Pure functions (no Pulumi, no I/O), in bytes per GPU (one TP rank).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from core.catalog import GIB, InstanceSpec, ModelSpec
from core.kv_cache import kv_bytes_per_token_per_rank

# Assumption: GPU memory a worker uses outside vLLM's --gpu-memory-utilization share, per GPU:
# CUDA context (~0.5-1 GiB per process), NCCL communicator buffers, NIXL/UCX registration and
# cuBLAS workspaces allocated after vLLM's profiling. 2 GiB is a rounded-up estimate, not a
# measurement; it only moves the reported headroom.
OVERHEAD_BYTES = 2 * GIB

# Assumption: peak activation memory vLLM's profiling run reserves inside its share, per GPU. The
# prefiller runs long chunked-prefill batches (docs: higher utilization risks prefill OOM from
# activations), the decoder at most --max-num-seqs tokens per step plus its CUDA graph pool.
ACTIVATION_RESERVE_BYTES = {"prefill": 4 * GIB, "decode": 2 * GIB}


def vllm_share_bytes(gpu_memory_bytes: int, utilization: float) -> int:
    """vLLM's share of one GPU at --gpu-memory-utilization, as vLLM computes it
    (vllm/v1/worker/utils.py, request_memory: ceil(total memory x utilization))."""
    return math.ceil(utilization * gpu_memory_bytes)


def weights_bytes_per_rank(model: ModelSpec, tp: int) -> int:
    """The model's weights on one of `tp` ranks (vLLM shards them evenly)."""
    return math.ceil(model.num_params * model.bytes_per_element / tp)


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
