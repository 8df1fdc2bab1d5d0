"""Where one GPU's memory goes in a prefill or decode worker, and the --gpu-memory-utilization
values a worker fits with.

Pure functions (no Pulumi, no I/O), in bytes per GPU (one TP rank).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from core.sizing.catalog import GIB, InstanceSpec, ModelSpec
from core.sizing.kv_cache import kv_bytes_per_token_per_rank

# Assumption: GPU memory a worker uses outside vLLM's --gpu-memory-utilization share, per GPU:
# CUDA context (~0.5-1 GiB per process), NCCL communicator buffers, NIXL/UCX registration and
# cuBLAS workspaces allocated after vLLM's profiling. 2 GiB is a rounded-up estimate, not a
# measurement; it only moves the reported headroom.
OVERHEAD_BYTES = 2 * GIB

# Assumption: peak activation memory vLLM's profiling run reserves inside its share, per GPU. The
# prefiller runs long chunked-prefill batches (docs: higher utilization risks prefill OOM from
# activations), the decoder at most --max-num-seqs tokens per step plus its CUDA graph pool.
ACTIVATION_RESERVE_BYTES = {"prefill": 4 * GIB, "decode": 2 * GIB}

# Activations are computed in 16 bits at least: an FP8 checkpoint's layers still run bf16.
_MIN_ACTIVATION_BYTES = 2


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


# --- one engine step's activations (--max-num-batched-tokens) ---------------------------------
#
# At startup vLLM runs one forward pass of max_num_batched_tokens dummy tokens and takes its
# peak memory out of the share before it sizes the KV cache (vLLM 0.19.0,
# vllm/v1/worker/gpu_worker.py Worker.determine_available_memory: available KV cache memory =
# requested memory - non_kv_cache_memory, the torch peak of the profile included;
# vllm/v1/worker/gpu_model_runner.py GPUModelRunner.profile_run: _dummy_run(max_num_tokens),
# max_num_tokens = scheduler_config.max_num_batched_tokens). When that leaves less than one
# --max-model-len sequence of KV cache, vLLM refuses to start.


def step_activation_bytes_per_token(model: ModelSpec, tp: int) -> int:
    """An estimate of one token's share of that peak on one rank, not a measurement: the
    tensors of one decoder layer's forward pass (vLLM frees each layer's before the next),
    the residual and the normed hidden states (hidden each), the QKV projection's output
    (sharded by TP; KV heads replicated when fewer than ranks), the MLP's gate_up output
    (2 x intermediate / TP) and its activation's output (intermediate / TP), and the layer's
    output (hidden: the row-parallel projections give every rank the full width before the
    all-reduce). Attention and MLP tensors are summed rather than the larger phase taken:
    the surplus stands in for what is not counted (attention workspaces, the sampler's logits,
    the compiled graph's buffers, allocator rounding)."""
    hidden = model.hidden
    qkv = math.ceil(model.num_attention_heads / tp) + 2 * math.ceil(model.num_kv_heads / tp)
    mlp = math.ceil(model.mlp_width / tp)
    elements = 2 * hidden + qkv * model.head_dim + 2 * mlp + mlp + hidden
    return elements * max(model.bytes_per_element, _MIN_ACTIVATION_BYTES)


@dataclass(frozen=True)
class StepBudget:
    """What vLLM's share of one GPU holds beside one step's activations: the weights and the KV
    cache of one --max-model-len sequence. The activation peak of a step of N tokens is N x
    per_token_bytes, never less than the role's activation reserve (floor_bytes)."""

    share_bytes: int
    weights_bytes: int
    kv_cache_bytes: int  # one --max-model-len sequence, per rank
    per_token_bytes: int
    floor_bytes: int

    @property
    def room_bytes(self) -> int:
        """What the share leaves for activations."""
        return self.share_bytes - self.weights_bytes - self.kv_cache_bytes

    def activation_bytes(self, tokens: int) -> int:
        return max(tokens * self.per_token_bytes, self.floor_bytes)

    def holds(self, tokens: int) -> bool:
        return self.activation_bytes(tokens) <= self.room_bytes

    @property
    def largest(self) -> int:
        """The largest --max-num-batched-tokens that fits; 0 when not even the reserve does
        (then no step budget helps: the gpu-memory policy's advice applies)."""
        if self.room_bytes < self.floor_bytes:
            return 0
        return self.room_bytes // self.per_token_bytes


def step_budget(
    model: ModelSpec,
    instance: InstanceSpec,
    tp: int,
    gpu_memory_utilization: float,
    max_model_len: int,
    role: str = "decode",
) -> StepBudget:
    """The step budget of a worker of `role` (a colocated worker is judged as the gpu-memory
    policy judges it: with the decoder's activation reserve)."""
    return StepBudget(
        share_bytes=vllm_share_bytes(instance.gpu_memory_bytes, gpu_memory_utilization),
        weights_bytes=weights_bytes_per_rank(model, tp),
        kv_cache_bytes=max_model_len * kv_bytes_per_token_per_rank(model, tp),
        per_token_bytes=step_activation_bytes_per_token(model, tp),
        floor_bytes=ACTIVATION_RESERVE_BYTES[role],
    )
