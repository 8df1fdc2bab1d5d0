"""Role args (settings/endpoint/vllm_args.py): read as vLLM 0.19.0 and the operator's merge read them, refused
with exit 2 naming the key before anything is planned."""

from __future__ import annotations

import pytest

from core.vllm.vllm_args import parse_flags
from core.vllm.vllm_flags import vllm_flags
from settings import parse_settings
from settings.endpoint.vllm_args import OWNED, SETTING_FLAGS, read_args
from specs.endpoint import colocated_args, effective_role_args
from tests.conftest import canary_raw, edit, stack_raw
from tests.settings.problems import followed, only_problem, problems_of

NS = "hyperpod-dpd"
DECODE = f"{NS}:endpoint.decode.args"
PREFILL = f"{NS}:endpoint.prefill.args"


def refused(key: str, args: list[str], raw=None) -> str:
    raw = edit(raw or stack_raw("dev"), key, args)
    message = only_problem(raw)
    assert message.startswith(f"{key}: got "), message
    return message


@pytest.mark.parametrize("flag", ["--model", "--host", "--port", "--port=9000"])
def test_a_flag_the_project_sets_is_refused_in_any_spelling(flag):
    message = refused(DECODE, [flag, "x"] if "=" not in flag else [flag])
    name = flag.partition("=")[0]
    assert "a flag the project does not set" in message
    assert f"Fix: remove {name} from {DECODE}" in message


@pytest.mark.parametrize("spelling", ["--tensor_parallel_size", "-tp", "--max_num_seqs"])
def test_a_rendered_flag_in_another_spelling_is_refused_with_vllms_own(spelling):
    message = refused(PREFILL, [spelling, "4"])
    if spelling.startswith("--"):
        flag = "--" + spelling[2:].replace("_", "-")
        setting = "tensorParallelSize" if "tensor" in flag else "maxNumSeqs"
        assert (
            f"write {flag} instead of '{spelling}' in {PREFILL}, or set "
            f"{NS}:endpoint.prefill.{setting}" in message
        )
    else:
        assert f"write --tensor-parallel-size instead of '-tp' in {PREFILL}" in message


@pytest.mark.parametrize(
    "args, allowed",
    [
        (["serve"], "a --flag before each value"),
        (["--max-num-seqs", "8", "16"], "a --flag before each value"),
        (["--enforce-eager", "true"], "no word after --enforce-eager"),
        (["--served-model-name", "a", "b"], "one value after --served-model-name"),
    ],
)
def test_a_positional_word_is_refused(args, allowed):
    assert allowed in refused(DECODE, args)


def test_an_empty_string_is_refused_naming_the_key():
    message = refused(DECODE, ["--enable-prefix-caching", ""])
    assert message.startswith(f"{DECODE}: got ''") and f"remove '' from {DECODE}" in message


def test_a_typo_is_refused_with_vllms_flag_as_a_hint():
    message = refused(DECODE, ["--tensor-paralell-size", "4"])
    assert "allowed: a flag of vLLM 0.19.0" in message
    assert "did you mean --tensor-parallel-size?" in message


@pytest.mark.parametrize(
    "args, allowed",
    [
        (["--max-num-seqs"], "a value after --max-num-seqs"),
        (["--enforce-eager=true"], "takes no value"),
        (["--max-num-seqs 8"], "one flag or one value per list item"),
    ],
)
def test_a_value_missing_or_given_to_a_switch_is_refused(args, allowed):
    assert allowed in refused(DECODE, args)


def test_tp_times_pp_times_dp_beyond_one_nodes_gpus_is_refused():
    message = refused(DECODE, ["--pipeline-parallel-size", "2"])
    assert "(8 x 2 x 1 = 16) at most the 8 GPUs of one ml.p5.48xlarge" in message
    assert refused(PREFILL, ["--tensor-parallel-size", "4", "--data-parallel-size", "4"])


@pytest.mark.parametrize("bad", ["0", "-1", "many"])
def test_max_num_seqs_of_zero_or_less_is_refused(bad):
    assert "--max-num-seqs a whole number of at least 1" in refused(DECODE, ["--max-num-seqs", bad])


def test_max_num_seqs_above_the_step_budget_is_refused():
    args = ["--max-num-seqs", "4096", "--max-num-batched-tokens", "2048"]
    assert "at most the step budget --max-num-batched-tokens (2048)" in refused(DECODE, args)


def test_max_num_seqs_above_the_colocated_budget_names_its_key():
    raw = edit(stack_raw("dev"), f"{NS}:endpoint.mode", "colocated")
    edit(raw, f"{NS}:endpoint.colocated", {"maxNumBatchedTokens": 2048})
    message = refused(DECODE, ["--max-num-seqs", "4096"], raw)
    assert f"{NS}:endpoint.colocated.maxNumBatchedTokens (2048)" in message


def test_the_several_endpoints_map_names_the_endpoints_key():
    key = f"{NS}:endpoints.candidate.decode.args"
    assert "did you mean --max-num-seqs?" in refused(key, ["--max-num-seq", "8"], canary_raw())


def test_valid_vllm_args_pass_and_merge():
    args = ["--enable-prefix-caching", "--kv-cache-dtype", "fp8", "--seed", "-1",
            "--tensor-parallel-size=8", "--compilation-config.mode", "3", "--hf-token",
            "--no-enforce-eager", "--max-num-seqs", "64", "--enable_chunked_prefill"]  # fmt: skip
    raw = edit(stack_raw("dev"), DECODE, args)
    s = parse_settings(raw)
    assert parse_flags(effective_role_args(s, "decode"))  # the merge reads them too
    assert not read_args(args, "decode").problems


def test_every_flag_the_project_renders_is_vllms_and_judged_here():
    """OWNED and SETTING_FLAGS hold every flag specs/endpoint.py renders (settings cannot import
    specs); each is a flag of the pinned vLLM."""
    raw = edit(stack_raw("dev"), f"{NS}:endpoint.colocated",
               {"maxNumBatchedTokens": 4096, "maxNumPartialPrefills": 2,
                "longPrefillTokenThreshold": 1024})  # fmt: skip
    s = parse_settings(raw)
    rendered = {name for role in ("prefill", "decode")
                for name, _ in parse_flags(effective_role_args(s, role))}  # fmt: skip
    rendered |= {name for name, _ in parse_flags(colocated_args(s))}
    assert rendered == set(OWNED) | set(SETTING_FLAGS)
    assert rendered <= set(vllm_flags())


def test_several_problems_are_listed_at_once():
    raw = edit(stack_raw("dev"), DECODE, ["", "--model", "x", "--tensor_parallel_size", "2"])
    assert len(problems_of(raw)) == 3


@pytest.mark.parametrize(
    "args",
    [
        ["--enforce-eager", "--enforce-eager"],
        ["--max-num-seqs", "16", "--max-num-seqs=24"],
        ["--max-num-batched-tokens", "8192", "--enable-chunked-prefill", "--max-num-batched-tokens", "4096"],
    ],
)  # fmt: skip
def test_a_flag_given_twice_is_refused_as_the_merge_keeps_one(args):
    message = refused(DECODE, args)
    assert "once: the operator's merge keeps one value per flag" in message
    assert parse_settings(followed(edit(stack_raw("dev"), DECODE, args), message))


def test_the_same_value_after_two_flags_is_taken():
    raw = edit(
        stack_raw("dev"), DECODE, ["--max-num-seqs", "16", "--max-num-partial-prefills", "16"]
    )
    assert parse_settings(raw)
