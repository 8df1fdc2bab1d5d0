"""KV cache maths: the docs' exact numbers, invariants (hypothesis)."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from core.sizing.catalog import GIB, MIB, ModelSpec, load_model
from core.sizing.kv_cache import (
    CHUNK_TOKENS,
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

LLAMA = load_model("llama-3.3-70b")
KV = 40_960  # docs: "about 40 KB per rank" for Llama 3.3 70B at TP 8


def test_docs_numbers_for_llama_70b_at_tp8():
    kv = kv_bytes_per_token_per_rank(LLAMA, 8)
    assert kv == KV
    assert chunk_bytes(kv) == 10 * MIB
    assert chunks_for_tokens(6035) == 24
    assert transfer_bytes(6035, kv) == 6144 * KV
    # The decoder's log line: "Retrieved 6035 out of 6035 ... size: 0.2344 gb".
    assert round(transfer_bytes(6035, kv) / GIB, 4) == 0.2344
    assert buffer_chunks(8 * GIB, kv) == 819
    assert transfers_that_fit(8 * GIB, 6035, kv) == 34
    # "8 GiB holds about 35": 8 / 0.23, ignoring chunks.
    assert round(transfers_unchunked(8 * GIB, 6035, kv)) == 35
    assert round(6000 * kv / GIB, 2) == 0.23
    assert not is_chunk_multiple(8 * GIB, kv)
    assert is_chunk_multiple(819 * 10 * MIB, kv)


def test_other_models_and_tp():
    assert kv_bytes_per_token_per_rank(load_model("llama-3.1-8b"), 8) == 2 * 32 * 1 * 128 * 2
    assert kv_bytes_per_token_per_rank(load_model("llama-3.1-405b"), 8) == 64_512
    assert kv_bytes_per_token_per_rank(LLAMA, 4) == 2 * KV
    assert kv_bytes_per_token_per_rank(LLAMA, 1) == 8 * KV


def test_recommendation_for_the_docs_load_and_long_prompts():
    # 34 transfers of 6,035 tokens need 816 chunks = 7.97 GiB: the docs' 8 GiB.
    assert recommend_pd_buffer(6035, 34, 16384, KV) == 8 * GIB
    assert recommend_pd_buffer(6035, 35, 16384, KV) == 9 * GIB
    # One small prompt still gets room for a full max-model-len transfer (64 chunks = 640 MiB).
    assert recommend_pd_buffer(100, 1, 16384, KV) == 1 * GIB
    assert recommend_pd_buffer(100, 1, 131072, KV) == 5 * GIB  # 512 chunks = 5 GiB


tokens = st.integers(min_value=1, max_value=1_000_000)
kv_sizes = st.integers(min_value=1, max_value=1_000_000)
buffers = st.integers(min_value=1, max_value=64 * GIB)


@given(tokens, kv_sizes)
def test_transfer_is_whole_chunks_covering_every_token(n, kv):
    size_bytes = transfer_bytes(n, kv)
    assert size_bytes % chunk_bytes(kv) == 0
    assert n * kv <= size_bytes < (n + CHUNK_TOKENS) * kv


@given(buffers, buffers, tokens, kv_sizes)
def test_transfers_that_fit_grow_with_the_buffer(b1, b2, n, kv):
    small, large = sorted((b1, b2))
    assert transfers_that_fit(small, n, kv) <= transfers_that_fit(large, n, kv)
    fit = transfers_that_fit(large, n, kv)
    assert fit * transfer_bytes(n, kv) <= large  # what fits really fits


@given(
    layers=st.integers(1, 200),
    kv_heads=st.integers(1, 128),
    head_dim=st.sampled_from([64, 80, 96, 128, 192, 256]),
    width=st.sampled_from([1, 2, 4]),
    tp1=st.integers(1, 64),
    tp2=st.integers(1, 64),
)
def test_kv_per_rank_never_grows_with_tp(layers, kv_heads, head_dim, width, tp1, tp2):
    model = ModelSpec("m", "x/m", layers, kv_heads * 4, kv_heads, head_dim, width, 1e9)
    low, high = sorted((tp1, tp2))
    assert kv_bytes_per_token_per_rank(model, high) <= kv_bytes_per_token_per_rank(model, low)
    # Every rank together holds at least all KV heads once.
    assert kv_bytes_per_token_per_rank(model, low) * low >= 2 * layers * kv_heads * head_dim * width


@given(
    prompt=st.integers(1, 131072),
    in_flight=st.integers(1, 256),
    max_len=st.integers(1, 131072),
    kv=st.sampled_from([16_384, 40_960, 64_512, 81_920]),
)
def test_recommended_buffer_holds_the_load_and_is_the_smallest_whole_gib(
    prompt, in_flight, max_len, kv
):
    rec = recommend_pd_buffer(prompt, in_flight, max_len, kv)
    assert rec % GIB == 0
    assert transfers_that_fit(rec, prompt, kv) >= in_flight
    assert transfers_that_fit(rec, max_len, kv) >= 1
    needed = max(in_flight * transfer_bytes(prompt, kv), transfer_bytes(max_len, kv))
    assert rec - GIB < needed <= rec
    assert math.ceil(needed / GIB) * GIB == rec
