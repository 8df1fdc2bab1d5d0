"""One set of effective numbers per endpoint and pool (settings/endpoint/numbers.py): a number given by its
typed key, through a role's args (`--flag value` or `--flag=value`) or environmentVariables is the
same number to every reader, is judged as its typed key is, and names where it came from.

The gate reads the set; the CrossGuard pack reads the rendered manifest back
(policies/rules/views.py). The two readings are held equal for every way of giving a number."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import vocabulary as v
from policies.gate import views
from policies.rules import views as rule_views
from settings import ConfigError, parse_settings
from specs.desired import desired_state
from tests.conftest import canary_raw, edit, stack_raw
from tests.settings.problems import followed, only_problem

NS = "hyperpod-dpd"
E = f"{NS}:endpoint"
FLAGS = {
    "tensor_parallel_size": "--tensor-parallel-size",
    "gpu_memory_utilization": "--gpu-memory-utilization",
    "max_model_len": "--max-model-len",
    "max_num_seqs": "--max-num-seqs",
}
# A value each number takes on the dev stack's p5 nodes, other than the dev stack's own, as the
# typed key is written and as a flag's text.
VALUES = {
    "tensor_parallel_size": (4, "4"),
    "gpu_memory_utilization": (0.8, "0.80"),
    "max_model_len": (12288, "12288"),
    "max_num_seqs": (24, "24"),
}
# The typed key of each number, under the endpoint ("<role>": under the role's own section).
TYPED = {
    "tensor_parallel_size": "<role>.tensorParallelSize",
    "gpu_memory_utilization": "gpuMemoryUtilization",
    "max_model_len": "maxModelLen",
    "max_num_seqs": "<role>.maxNumSeqs",
}


def _gate_and_pack(raw, stack="dev"):
    """Each IEC's numbers as the gate reads them (typed, from the settings) and as the pack reads
    them back from the manifest the components register."""
    gate = [x for x in views(desired_state(parse_settings(raw), NS, stack)) if x.type == v.IEC_TYPE]
    assert gate
    return [
        (iec.facts, rule_views.worker_facts(dataclasses.replace(iec, facts=None))) for iec in gate
    ]


def _given(raw, mode, role, number, way):
    """`raw` (the dev stack) with `number` of `role` given `way`; the key the set must name."""
    value, text = VALUES[number]
    edit(raw, f"{E}.mode", mode)
    section = "decode" if mode == "colocated" else role  # a colocated worker runs decode's args
    flag = FLAGS[number]
    if way == "key":
        key = f"{E}.{TYPED[number].replace('<role>', section)}"
        edit(raw, key, value)
        return key
    args = [flag, text] if way == "args" else [f"{flag}={text}"]
    edit(raw, f"{E}.{section}.args", args)
    return f"{flag} in {E}.{section}.args"


WAYS = [
    (mode, role, number, way)
    for mode in ("dpd", "colocated")
    for role in ("prefill", "decode")
    for number in FLAGS
    for way in ("key", "args", "args=")
    if not (mode == "colocated" and role == "prefill")  # one pool: decode's section is its own
]


@pytest.mark.parametrize(("mode", "role", "number", "way"), WAYS)
def test_every_way_of_giving_a_number_reads_alike_in_the_gate_and_the_pack(mode, role, number, way):
    raw = stack_raw("dev")
    where = _given(raw, mode, role, number, way)
    [(gate, pack)] = _gate_and_pack(raw)
    assert gate == pack
    assert getattr(gate.roles[role], number) == VALUES[number][0]
    shared = mode == "colocated" or (way == "key" and "<role>" not in TYPED[number])
    for other in {"prefill", "decode"} - {role}:
        # The other role runs the same number only where one key sets both.
        assert (getattr(gate.roles[other], number) == VALUES[number][0]) == shared
    assert gate.keys[f"{role}.{number}"] == where


@pytest.mark.parametrize("text", ["4294967296", "4GiB", "4 GiB", "4096MiB"])
def test_pd_buffer_size_in_environment_variables_is_parsed_as_pd_buffer_size(text):
    raw = edit(stack_raw("dev"), f"{E}.environmentVariables", {"PD_BUFFER_SIZE": text})
    [(gate, pack)] = _gate_and_pack(raw)
    assert gate == pack and gate.pd_buffer_bytes == 4 * 2**30
    assert gate.keys["pd_buffer_bytes"] == f"{E}.environmentVariables.PD_BUFFER_SIZE"
    [iec] = [
        x for x in views(desired_state(parse_settings(raw), NS, "dev")) if x.type == v.IEC_TYPE
    ]
    # The worker gets bytes, as it does from pdBufferSize: what LMCache reads and the pack parses.
    assert rule_views.env(iec)["PD_BUFFER_SIZE"] == str(4 * 2**30)


def test_each_endpoint_of_several_reads_alike_in_the_gate_and_the_pack():
    raw = canary_raw()
    edit(raw, f"{NS}:endpoints.candidate.decode.args", ["--max-model-len=12288"])
    edit(raw, f"{NS}:endpoints.baseline.environmentVariables", {"PD_BUFFER_SIZE": "6GiB"})
    readings = _gate_and_pack(raw, "canary")
    assert len(readings) == 2 and all(gate == pack for gate, pack in readings)
    keys = {k for gate, _ in readings for k in gate.keys.values()}
    assert f"--max-model-len in {NS}:endpoints.candidate.decode.args" in keys
    assert f"{NS}:endpoints.baseline.environmentVariables.PD_BUFFER_SIZE" in keys


@settings(max_examples=60, derandomize=True, deadline=None)
@given(
    st.sampled_from(["gpu_memory_utilization", "max_model_len"]),
    st.sampled_from(["decode", "prefill"]),
    st.booleans(),
    st.integers(min_value=1, max_value=99),
    st.sampled_from(["{}", "0{}", " {} ", "{}.0"]),
)
def test_a_flag_spelt_any_way_vllm_reads_is_one_number_to_the_gate_and_the_pack(
    number, role, joined, n, spelling
):
    """Spellings of one value as vLLM's int()/float() take them: the gate takes the value the
    pack reads back, or the settings refuse the text as the typed key's parser would."""
    text = spelling.format(n / 100 if number == "gpu_memory_utilization" else n * 256)
    flag = FLAGS[number]
    raw = edit(stack_raw("dev"), f"{E}.{role}.args", [f"{flag}={text}"] if joined else [flag, text])
    try:
        [(gate, pack)] = _gate_and_pack(raw)
    except ConfigError as refused:
        [problem] = refused.problems
        assert problem.key == f"{E}.{role}.args" and flag in problem.allowed
        return
    assert gate == pack
    assert getattr(gate.roles[role], number) == (float if "utilization" in number else int)(text)


# --- an override is refused where its typed key is -------------------------------------------

BAD = {
    "gpu_memory_utilization": [0.0, -0.5, 1.5, float("nan"), float("inf")],
    "max_model_len": [0, -1, 200_000],  # 200000: above Llama 3.3's 131072-token context
    "tensor_parallel_size": [0, 3, 16],  # 3 divides no 64 heads; 16 is more than a p5 has
    "max_num_seqs": [0, -4],
}


@pytest.mark.parametrize(
    ("number", "value"), [(n, x) for n, values in BAD.items() for x in values], ids=str
)
@pytest.mark.parametrize("joined", [False, True])
def test_a_number_its_typed_key_refuses_is_refused_in_the_decoders_args(number, value, joined):
    typed = stack_raw("dev")
    edit(typed, f"{E}.{TYPED[number].replace('<role>', 'decode')}", value)
    with pytest.raises(ConfigError):
        parse_settings(typed)
    flag, key, text = FLAGS[number], f"{E}.decode.args", str(value)
    raw = edit(stack_raw("dev"), key, [f"{flag}={text}"] if joined else [flag, text])
    message = only_problem(raw)
    assert message.startswith(f"{key}: got '{flag} "), message
    parse_settings(followed(raw, message))  # the fix printed is one the settings take


@pytest.mark.parametrize("text", ["16k", "0x2000", "8192.5", ""])
def test_max_model_len_is_a_whole_number_of_tokens_in_args_as_in_its_key(text):
    key = f"{E}.decode.args"
    message = only_problem(edit(stack_raw("dev"), key, [f"--max-model-len={text}"]))
    assert message.startswith(f"{key}: got '--max-model-len")
    assert "allowed: --max-model-len a whole number of at least 1, as " in message
    assert f"{E}.maxModelLen takes" in message
    assert f"Fix: set --max-model-len in {key} to 16384" in message


@pytest.mark.parametrize(("text", "reason"), [
    ("lots", "a whole number of bytes or a size such as '8GiB'"),
    ("0", "is not a positive whole number of bytes"),
    ("-1GiB", "a whole number of bytes or a size such as '8GiB'"),
    (None, "null would take PD_BUFFER_SIZE off the pods"),
])  # fmt: skip
def test_pd_buffer_size_in_environment_variables_is_refused_as_pd_buffer_size_is(text, reason):
    if text is not None:
        with pytest.raises(ConfigError):
            parse_settings(edit(stack_raw("dev"), f"{E}.pdBufferSize", text))
    raw = edit(stack_raw("dev"), f"{E}.environmentVariables", {"PD_BUFFER_SIZE": text})
    message = only_problem(raw)
    key = f"{E}.environmentVariables.PD_BUFFER_SIZE"
    assert message.startswith(f"{key}: got "), message
    assert reason in message and f"as {E}.pdBufferSize takes" in message
    fixed = parse_settings(followed(raw, message))
    assert fixed.entries()[0].numbers.pd_buffer.value == 8 * 2**30


def test_a_context_beyond_the_model_is_refused_where_the_args_give_it():
    message = only_problem(
        edit(stack_raw("dev"), f"{E}.prefill.args", ["--max-model-len", "262144"])
    )
    assert message.startswith(
        f"{E}.prefill.args: got '--max-model-len 262144'; allowed: at most 131072"
    )
    assert f"Fix: set --max-model-len in {E}.prefill.args to 16384" in message


def test_a_long_prefill_threshold_is_judged_against_the_colocated_workers_own_context():
    raw = edit(stack_raw("dev"), f"{E}.mode", "colocated")
    edit(raw, f"{E}.colocated.longPrefillTokenThreshold", 10000)
    parse_settings(raw)  # below the maxModelLen of 16384
    edit(raw, f"{E}.decode.args", ["--max-model-len", "8192"])
    message = only_problem(raw)
    assert message.startswith(
        f"{E}.colocated.longPrefillTokenThreshold: got 10000; allowed: at most --max-model-len "
        f"in {E}.decode.args (8192)"
    )


def test_a_colocated_step_budget_is_judged_against_the_batch_the_worker_runs():
    """The colocated worker runs the decoder's --max-num-seqs: a batch its args lower below the
    typed maxNumSeqs fits a budget the typed one would not, and one they raise does not."""
    raw = edit(stack_raw("dev"), f"{E}.colocated", {"maxNumBatchedTokens": 16})
    assert "at least endpoint.decode.maxNumSeqs (32)" in only_problem(raw)
    edit(raw, f"{E}.decode.args", ["--max-num-seqs", "8"])
    parse_settings(raw)
    edit(raw, f"{E}.colocated", {"maxNumBatchedTokens": 48})
    edit(raw, f"{E}.decode.args", ["--max-num-seqs=64"])
    message = only_problem(raw)
    assert message.startswith(f"{E}.colocated.maxNumBatchedTokens: got 48; allowed: at least ")
    assert "--max-num-seqs in endpoint.decode.args (64)" in message
