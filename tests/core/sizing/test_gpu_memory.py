"""GPU memory of one worker: the utilizations offered are ones the rules accept (hypothesis)."""

from __future__ import annotations

import dataclasses

from hypothesis import given
from hypothesis import strategies as st

from core.sizing.catalog import GIB, INSTANCES, MODELS, load_model
from core.sizing.gpu_memory import (
    ACTIVATION_RESERVE_BYTES,
    step_activation_bytes_per_token,
    step_budget,
    worker_fit,
)


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


# --- one engine step's activations (--max-num-batched-tokens) ---------------------------------

LLAMA_70B = MODELS["llama-3.3-70b"]
P5, P5E = INSTANCES["ml.p5.48xlarge"], INSTANCES["ml.p5e.48xlarge"]


def test_one_tokens_activations_by_hand():
    # Llama 3.3 70B at TP 8: residual + normed (2 x 8192) + QKV (8 + 2 x 1 heads of 128) +
    # gate_up (2 x 28672 / 8) + activation (28672 / 8) + layer output (8192), bf16.
    assert step_activation_bytes_per_token(LLAMA_70B, 8) == 2 * (
        2 * 8192 + (8 + 2) * 128 + 2 * 3584 + 3584 + 8192
    )
    assert step_activation_bytes_per_token(LLAMA_70B, 8) == 73_216
    # Llama 3.1 8B at TP 1: 2 x 4096 + (32 + 16) x 128 + 3 x 14336 + 4096 = 61440 elements.
    assert step_activation_bytes_per_token(MODELS["llama-3.1-8b"], 1) == 122_880
    # An FP8 checkpoint still computes in bf16: the same bytes as the bf16 model.
    fp8 = dataclasses.replace(LLAMA_70B, bytes_per_element=1)
    assert step_activation_bytes_per_token(fp8, 8) == 73_216


def test_the_largest_step_budget_on_p5_by_hand():
    """0.75 x 81920 MiB = 60 GiB share; 70.6e9 x 2 / 8 = 17.65e9 B of weights; 16384 tokens x
    40960 B of KV; what is left, over 73216 B per token."""
    budget = step_budget(LLAMA_70B, P5, 8, 0.75, 16384)
    assert budget.share_bytes == 60 * GIB
    assert budget.weights_bytes == 17_650_000_000
    assert budget.kv_cache_bytes == 16384 * 40960
    assert budget.room_bytes == 60 * GIB - 17_650_000_000 - 671_088_640 == 46_103_420_800
    assert budget.largest == 46_103_420_800 // 73_216 == 629_690
    assert budget.holds(629_690) and not budget.holds(629_691)
    assert step_budget(LLAMA_70B, P5, 8, 0.75, 16384).largest == 629_690


def test_the_largest_step_budget_on_p5e_and_with_a_long_context():
    # H200: 0.75 x 144384 MiB = 105.75 GiB share.
    assert (
        step_budget(LLAMA_70B, P5E, 8, 0.75, 16384).largest
        == ((113_548_197_888 - 17_650_000_000 - 671_088_640) // 73_216)
        == 1_300_632
    )
    # A 131072-token sequence's KV cache (5 GiB) comes out of the same room.
    assert (
        step_budget(LLAMA_70B, P5, 8, 0.75, 131072).largest
        == ((60 * GIB - 17_650_000_000 - 5 * GIB) // 73_216)
        == 565_529
    )


def test_small_steps_cost_the_activation_reserve():
    budget = step_budget(LLAMA_70B, P5, 8, 0.75, 16384)
    # 2048 tokens x 73216 B = 143 MiB: less than the decoder's 2 GiB reserve, which counts.
    assert budget.activation_bytes(2048) == ACTIVATION_RESERVE_BYTES["decode"] == 2 * GIB
    assert budget.activation_bytes(100_000) == 100_000 * 73_216


def test_no_step_budget_when_the_weights_leave_no_room():
    # Llama 3.1 405B at TP 8 on H100: 101.5e9 B of weights per GPU, more than the 60 GiB share.
    budget = step_budget(MODELS["llama-3.1-405b"], P5, 8, 0.75, 16384)
    assert budget.room_bytes < 0
    assert budget.largest == 0 and not budget.holds(1)


@given(
    model=st.sampled_from(sorted(MODELS)),
    instance=st.sampled_from(sorted(INSTANCES)),
    tp=st.sampled_from([1, 2, 4, 8]),
    utilization=st.floats(0.3, 0.95),
    max_len=st.integers(256, 131_072),
)
def test_the_largest_step_budget_is_the_boundary(model, instance, tp, utilization, max_len):
    budget = step_budget(MODELS[model], INSTANCES[instance], tp, utilization, max_len)
    if budget.largest:
        assert budget.holds(budget.largest) and not budget.holds(budget.largest + 1)
    else:
        assert not budget.holds(1)
