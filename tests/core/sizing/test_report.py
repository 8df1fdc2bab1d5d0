"""The sizing report: the docs' example, its JSON, warnings, and input errors."""

from __future__ import annotations

import json

import pytest

from core.problems import show
from core.sizing.catalog import GIB, MIB, ModelSpec, SizingError, instance_spec, load_model
from core.sizing.gpu_memory import ACTIVATION_RESERVE_BYTES, OVERHEAD_BYTES
from core.sizing.report import size, validate_tp

LLAMA = load_model("llama-3.3-70b")
P5 = instance_spec("ml.p5.48xlarge")
KV = 40_960  # docs: "about 40 KB per rank" for Llama 3.3 70B at TP 8


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
    # The docs' setup is sound: its 8 GiB buffer, 819 whole chunks and 2 MiB LMCache 0.4.3
    # leaves idle, is no problem (core/sizing/kv_cache.py buffer_in_chunks).
    assert r.warnings == []
    followed = size(LLAMA, P5, tp=8, prompt_tokens=6035, pd_buffer_bytes=8190 * MIB)
    assert followed.warnings == [] and followed.pd_buffer_chunks == 819


def test_report_json_is_plain_json_with_camel_case_keys():
    doc = size(LLAMA, P5, in_flight=40).to_json()
    assert json.loads(json.dumps(doc)) == doc
    assert doc["kvBytesPerTokenPerRank"] == KV
    assert doc["decode"]["headroomBytes"] == 10 * GIB
    assert doc["recommendedPdBufferBytes"] == 10 * GIB  # 40 x 24 chunks = 9.375 GiB -> 10 GiB


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
    (problem,) = exc.value.problems  # the one problem type, keyed by the flag; the key beside it
    assert (problem.key, problem.value, exc.value.key) == (
        "--tp",
        tp,
        "endpoint.tensorParallelSize",
    )
    assert "64 attention heads" in problem.allowed and "1, 2, 4, 8" in problem.fix
    assert str(exc.value).endswith(problem.render())


@pytest.mark.parametrize("tp", [0, 16, -1])
def test_tp_outside_one_node(tp):
    with pytest.raises(SizingError, match=r"--tp: got .*between 1 and the 8 GPUs"):
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
    assert f"{flag}: got {show(next(iter(kwargs.values())))};" in str(exc.value)
