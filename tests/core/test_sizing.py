"""Sizing formulas: the docs' exact numbers, invariants (hypothesis), and input errors."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.catalog import (
    GIB,
    INSTANCES,
    MIB,
    MODELS,
    ModelSpec,
    SizingError,
    instance_spec,
    load_model,
)
from core.sizing import (
    ACTIVATION_RESERVE_BYTES,
    CHUNK_TOKENS,
    OVERHEAD_BYTES,
    buffer_chunks,
    chunk_bytes,
    chunks_for_tokens,
    is_chunk_multiple,
    kv_bytes_per_token_per_rank,
    recommend_pd_buffer,
    size,
    transfer_bytes,
    transfers_that_fit,
    transfers_unchunked,
    validate_tp,
    worker_fit,
)

LLAMA = load_model("llama-3.3-70b")
P5 = instance_spec("ml.p5.48xlarge")
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


def test_report_for_the_docs_example():
    r = size(LLAMA, P5, tp=8, prompt_tokens=6035, pd_buffer_bytes=8 * GIB)
    assert (r.kv_bytes_per_token_per_rank, r.chunk_bytes, r.prompt_chunks) == (KV, 10 * MIB, 24)
    assert (r.transfer_gib, r.pd_buffer_chunks, r.transfers_in_flight) == (0.2344, 819, 34)
    assert r.max_model_len_chunks == 64
    assert r.recommended_pd_buffer_bytes is None
    # Per-GPU budget: 80 GiB H100, 0.75 -> 60 GiB for vLLM; 70.6e9 x 2 B / 8 of weights.
    for budget in (r.prefill, r.decode):
        assert budget.gpu_memory_bytes == 80 * GIB
        assert budget.vllm_share_bytes == 60 * GIB
        assert budget.weights_bytes == 17_650_000_000
        expected_kv = 60 * GIB - 17_650_000_000 - ACTIVATION_RESERVE_BYTES[budget.role]
        assert budget.kv_cache_bytes == expected_kv
        assert budget.kv_cache_tokens == expected_kv // KV
    assert r.prefill.pd_buffer_bytes == 0
    assert r.decode.pd_buffer_bytes == 8 * GIB
    assert r.prefill.headroom_bytes == 80 * GIB - 60 * GIB - OVERHEAD_BYTES
    assert r.decode.headroom_bytes == 80 * GIB - 60 * GIB - 8 * GIB - OVERHEAD_BYTES
    # With the documented 2 GiB overhead assumption: 18 GiB and 10 GiB to spare.
    assert (r.prefill.headroom_bytes, r.decode.headroom_bytes) == (18 * GIB, 10 * GIB)
    # Only the chunk-alignment note: the docs' setup is otherwise sound.
    assert len(r.warnings) == 1 and "not a multiple of the 10 MiB chunk" in r.warnings[0]


def test_report_json_is_plain_json_with_camel_case_keys():
    doc = size(LLAMA, P5, in_flight=40).to_json()
    assert json.loads(json.dumps(doc)) == doc
    assert doc["kvBytesPerTokenPerRank"] == KV
    assert doc["decode"]["headroomBytes"] == 10 * GIB
    assert doc["recommendedPdBufferBytes"] == 10 * GIB  # 40 x 24 chunks = 9.375 GiB -> 10 GiB


def test_recommendation_for_the_docs_load_and_long_prompts():
    # 34 transfers of 6,035 tokens need 816 chunks = 7.97 GiB: the docs' 8 GiB.
    assert recommend_pd_buffer(6035, 34, 16384, KV) == 8 * GIB
    assert recommend_pd_buffer(6035, 35, 16384, KV) == 9 * GIB
    # One small prompt still gets room for a full max-model-len transfer (64 chunks = 640 MiB).
    assert recommend_pd_buffer(100, 1, 16384, KV) == 1 * GIB
    assert recommend_pd_buffer(100, 1, 131072, KV) == 5 * GIB  # 512 chunks = 5 GiB


def test_warnings_predict_buffer_exhaustion_and_oom():
    r = size(LLAMA, P5, in_flight=64, pd_buffer_bytes=8 * GIB)
    assert any("64 transfers expected in flight but only 34 fit" in w for w in r.warnings)
    tight = size(LLAMA, P5, pd_buffer_bytes=512 * MIB)
    assert any("one 16384-token prompt needs 64" in w for w in tight.warnings)
    # 76 GiB vLLM share + 16 GiB buffer + 2 GiB overhead on an 80 GiB GPU.
    over = size(LLAMA, P5, gpu_memory_utilization=0.95, pd_buffer_bytes=16 * GIB)
    assert any(w.startswith("decode: over GPU memory by 14.00 GiB") for w in over.warnings)
    small = size(load_model("llama-3.1-8b"), P5)
    assert any("sub-70B" in w for w in small.warnings)
    too_big = size(load_model("llama-3.1-405b"), P5)  # 405.9e9 x 2 / 8 = 94.5 GiB per H100
    assert any("no room for KV cache" in w for w in too_big.warnings)
    assert too_big.prefill.kv_cache_tokens == 0


@pytest.mark.parametrize("tp", [3, 5, 6, 7])
def test_tp_not_dividing_heads_names_the_key_and_flag(tp):
    with pytest.raises(SizingError) as exc:
        validate_tp(LLAMA, P5, tp)
    message = str(exc.value)
    assert message.startswith(f"endpoint.tensorParallelSize (--tp) = {tp}:")
    assert "64 attention heads" in message and "1, 2, 4, 8" in message


@pytest.mark.parametrize("tp", [0, 16, -1])
def test_tp_outside_one_node(tp):
    with pytest.raises(SizingError, match=r"--tp\) = .*between 1 and the 8 GPUs"):
        size(LLAMA, P5, tp=tp)


def test_tp_must_shard_or_replicate_kv_heads_evenly():
    odd = ModelSpec("odd", "x/odd", 4, 24, 6, 128, 2, 1e9)
    with pytest.raises(SizingError, match="6 KV heads"):
        validate_tp(odd, P5, 4)  # 24 heads / 4 fine, but 6 KV heads neither divide nor replicate
    validate_tp(odd, P5, 3)
    validate_tp(odd, P5, 6)


@pytest.mark.parametrize(
    ("kwargs", "flag"),
    [
        ({"prompt_tokens": 0}, "--prompt-tokens"),
        ({"prompt_tokens": 20000}, "--prompt-tokens"),
        ({"gpu_memory_utilization": 0}, "--gpu-memory-utilization"),
        ({"gpu_memory_utilization": 1.5}, "--gpu-memory-utilization"),
        ({"pd_buffer_bytes": 0}, "--pd-buffer"),
        ({"max_model_len": 0}, "--max-model-len"),
        ({"in_flight": 0}, "--in-flight"),
    ],
)
def test_bad_inputs_name_their_flag(kwargs, flag):
    with pytest.raises(SizingError) as exc:
        size(LLAMA, P5, **kwargs)
    assert exc.value.flag == flag
    assert f"({flag}) = {next(iter(kwargs.values()))!r}" in str(exc.value)


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


@given(
    model=st.sampled_from(sorted(MODELS)),
    instance=st.sampled_from(sorted(INSTANCES)),
    tp=st.sampled_from([1, 2, 4, 8]),
    max_len=st.integers(256, 131_072),
    buffer_gib=st.integers(0, 32),
    role=st.sampled_from(["prefill", "decode"]),
)
def test_the_utilizations_offered_are_ones_the_rules_accept(
    model, instance, tp, max_len, buffer_gib, role
):
    """The gpu-memory and pd-buffer-fits rules advise "a utilization between lowest and highest":
    both ends must pass both rules' own checks (vLLM's rounding of the share included)."""
    spec, inst = load_model(model), INSTANCES[instance]
    if tp > inst.gpu_count:
        return
    fit = worker_fit(role, spec, inst, tp, max_len, buffer_gib * GIB)
    if not fit.possible:
        return
    for utilization in (fit.lowest, fit.highest):
        assert fit.holds(utilization) and fit.leaves_room(utilization), utilization
