"""KV cache bytes, LMCache chunks and PD buffer transfers, in the units LMCache and vLLM use.

Pure functions (no Pulumi, no I/O). The formulas reproduce the AWS DPD docs' numbers: Llama 3.3
70B at TP 8 moves 40,960 B of KV per token per rank; LMCache moves whole 256-token chunks, so a
6,035-token prompt is 24 chunks = 0.2344 GiB, and an 8 GiB PD_BUFFER_SIZE (819 whole chunks) holds
34 such transfers at once.
"""

from __future__ import annotations

import math

from core.sizing.catalog import GIB, ModelSpec, SizingError
from core.units import format_bytes

# LMCache's default chunk_size: the unit it stores, sends and allocates the PD buffer in.
CHUNK_TOKENS = 256

# The prompt of the decoder log line the DPD docs quote ("Retrieved 6035 out of 6035 required
# tokens"): the typical prompt length assumed where none is given.
DOCS_PROMPT_TOKENS = 6035


def assumed_prompt_tokens(max_model_len: int) -> int:
    """The typical prompt length where none is given: the docs' example, or the whole context
    when that is shorter (vLLM refuses a prompt longer than --max-model-len)."""
    return min(DOCS_PROMPT_TOKENS, max(max_model_len, 1))


# The PD_BUFFER_SIZE of the DPD docs' example (819 whole chunks of Llama 3.3 70B at TP 8).
DOCS_PD_BUFFER_BYTES = 8 * GIB
# The rest of the docs' example worker: vLLM's --max-model-len and --gpu-memory-utilization.
DOCS_MAX_MODEL_LEN = 16384
DOCS_GPU_MEMORY_UTILIZATION = 0.75


def kv_bytes_per_token_per_rank(model: ModelSpec, tp: int) -> int:
    """2 (K and V) x layers x KV heads on one rank x head_dim x bytes per element.

    With fewer KV heads than ranks vLLM replicates heads, so a rank holds at least one.
    """
    if tp < 1:
        raise SizingError("tp", tp, "must be at least 1", "Set it to the GPUs per replica.")
    heads_per_rank = math.ceil(model.num_kv_heads / tp)
    return 2 * model.num_layers * heads_per_rank * model.head_dim * model.bytes_per_element


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


def buffer_in_chunks(buffer_bytes: int, kv_per_token: int) -> str:
    """How LMCache takes a PD buffer, said once for `size` and the plan alike: its whole chunks,
    and what it leaves idle when the size is not a whole number of them. Not a problem with the
    images the stack runs: both carry LMCache 0.4.3 (core/versions.py), released 2026-04-06 after
    LMCache PR #2694 (merged 2026-03-05), which rounds the buffer down to whole chunks instead of
    refusing it; what is left idle is less than one chunk (2 MiB of the docs' 8 GiB)."""
    chunks = buffer_chunks(buffer_bytes, kv_per_token)
    idle = buffer_bytes - chunks * chunk_bytes(kv_per_token)
    if not idle:
        return f"{chunks} chunks"
    return f"{chunks} chunks (LMCache rounds down: {format_bytes(idle)} idle)"


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
