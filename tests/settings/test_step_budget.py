"""A step budget (--max-num-batched-tokens) vLLM can start with: one step's activations, the
weights and one max-model-len sequence of KV cache in vLLM's share (settings/endpoint/sizing.py
check_step_budget; the numbers are core/sizing/gpu_memory.py's, see tests/core/sizing/test_gpu_memory.py)."""

from __future__ import annotations

import re

import pytest

from core.sizing.catalog import INSTANCES, MODELS
from core.sizing.gpu_memory import step_budget
from policies.gate import judge
from settings import parse_settings
from specs.desired import desired_state
from tests.conftest import canary_raw, edit, stack_raw
from tests.settings.problems import only_problem

NS = "hyperpod-dpd"
KEY = f"{NS}:endpoint.colocated.maxNumBatchedTokens"
# Llama 3.3 70B at TP 8, gpuMemoryUtilization 0.75, maxModelLen 16384 (the dev and prod stacks).
LARGEST_P5 = 629_690
LARGEST_P5E = 1_300_632


def colocated(raw, budget=None, **endpoint):
    edit(raw, f"{NS}:endpoint.mode", "colocated")
    if budget is not None:
        edit(raw, f"{NS}:endpoint.colocated", {"maxNumBatchedTokens": budget})
    for name, value in endpoint.items():
        edit(raw, f"{NS}:endpoint.{name}", value)
    return raw


def applied_fix(raw, message: str):
    """`raw` with the value the problem's `pulumi config set` line gives."""
    key, value = re.search(r"pulumi config set --path '([^']+)' (\d+)", message).groups()
    path = key.partition(":")[2].split(".")
    return edit(raw, ".".join([f"{NS}:{path[0]}", *path[1:]]), int(value))


def test_the_largest_budgets_are_the_cores():
    llama = MODELS["llama-3.3-70b"]
    for itype, largest in (("ml.p5.48xlarge", LARGEST_P5), ("ml.p5e.48xlarge", LARGEST_P5E)):
        assert step_budget(llama, INSTANCES[itype], 8, 0.75, 16384).largest == largest


def test_a_budget_far_above_what_the_gpu_holds_is_refused(dev_raw):
    message = only_problem(colocated(dev_raw, 1_000_000))
    assert message.startswith(
        f"{KEY}: got 1000000; allowed: at most 629,690 for llama-3.3-70b at TP 8 on "
        "ml.p5.48xlarge: one step of 1,000,000 tokens needs 68.2 GiB of activations per GPU "
        "(an estimate) beside 16.4 GiB of weights and the KV cache of one 16384-token sequence"
    )
    assert "in vLLM's 60.0 GiB share (gpuMemoryUtilization 0.75)" in message
    assert f"Fix: pulumi config set --path '{KEY}' 628736" in message  # 307 x 2048


@pytest.mark.parametrize("budget", [None, 8192, 16384])
def test_the_default_and_realistic_budgets_are_accepted(dev_raw, budget):
    s = parse_settings(colocated(dev_raw, budget))
    assert s.endpoint.colocated.max_num_batched_tokens == budget


def test_the_largest_budget_that_fits_passes_and_one_more_token_does_not(dev_raw):
    parse_settings(colocated(stack_raw("dev"), LARGEST_P5))
    assert "at most 629,690" in only_problem(colocated(dev_raw, LARGEST_P5 + 1))


def test_the_fix_printed_is_one_that_passes(dev_raw):
    message = only_problem(colocated(dev_raw, 1_000_000))
    s = parse_settings(applied_fix(dev_raw, message))
    assert s.endpoint.colocated.max_num_batched_tokens == 628_736


def test_a_long_max_model_len_leaves_less_room(dev_raw):
    # Its 131072-token sequence's KV cache (5 GiB) comes out of the same share.
    colocated(dev_raw, 600_000, maxModelLen=131072)
    message = only_problem(dev_raw)
    assert "at most 565,529" in message and "one 131072-token sequence (5.00 GiB)" in message
    parse_settings(applied_fix(dev_raw, message))


def test_h200_holds_a_larger_budget():
    prod = stack_raw("prod")
    parse_settings(colocated(prod, 1_000_000))
    message = only_problem(colocated(stack_raw("prod"), 2_000_000))
    assert "at most 1,300,632 for llama-3.3-70b at TP 8 on ml.p5e.48xlarge" in message


def test_dpd_mode_ignores_the_colocated_budget(dev_raw):
    edit(dev_raw, f"{NS}:endpoint.colocated", {"maxNumBatchedTokens": 1_000_000})
    assert parse_settings(dev_raw).endpoint.mode == "dpd"


def test_a_role_args_budget_is_judged_the_same_way(dev_raw):
    edit(dev_raw, f"{NS}:endpoint.decode.args", ["--max-num-batched-tokens", "1000000"])
    message = only_problem(dev_raw)
    assert message.startswith(
        f"{NS}:endpoint.decode.args: got '--max-num-batched-tokens 1000000'; allowed: at most "
        "629,690"
    )
    assert f"set --max-num-batched-tokens in {NS}:endpoint.decode.args to 628736" in message
    edit(dev_raw, f"{NS}:endpoint.decode.args", ["--max-num-batched-tokens", "628736"])
    parse_settings(dev_raw)


def test_a_role_args_budget_uses_the_role_args_numbers(dev_raw):
    # The prefiller's own --gpu-memory-utilization 0.9 gives it 72 GiB: room for more, with
    # the prefiller's 4 GiB reserve as the floor.
    edit(dev_raw, f"{NS}:endpoint.prefill.args",
         ["--gpu-memory-utilization", "0.9", "--max-num-batched-tokens", "1000000"])  # fmt: skip
    message = only_problem(dev_raw)
    assert "in vLLM's 72.0 GiB share (gpuMemoryUtilization 0.9)" in message
    assert message.startswith(f"{NS}:endpoint.prefill.args: got '--max-num-batched-tokens")


def test_the_colocated_pool_of_a_multi_endpoint_stack_names_its_key():
    raw = canary_raw()
    edit(raw, f"{NS}:endpoints.baseline.colocated", {"maxNumBatchedTokens": 1_000_000})
    message = only_problem(raw)
    key = f"{NS}:endpoints.baseline.colocated.maxNumBatchedTokens"
    assert message.startswith(f"{key}: got 1000000; allowed: at most 629,690")
    parse_settings(applied_fix(raw, message))


def test_no_budget_helps_when_the_weights_leave_no_room(dev_raw):
    # 0.2 x 80 GiB = 16 GiB: less than the 16.4 GiB of weights per GPU. The budget is not the
    # problem: the config passes, and the gpu-memory policy says what would fit.
    colocated(dev_raw, 8192, gpuMemoryUtilization=0.2)
    settings = parse_settings(dev_raw)
    found = judge(desired_state(settings, "hyperpod-dpd", "dev"))
    [memory] = [v.message for v in found if v.policy == "hyperpod-dpd-gpu-memory"]
    assert "workers cannot start" in memory
    assert "set hyperpod-dpd:endpoint.gpuMemoryUtilization between" in memory
