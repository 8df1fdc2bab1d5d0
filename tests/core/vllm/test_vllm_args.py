"""The operator's role-args merge rule, modelled exactly."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.vllm.vllm_args import flag_value, merge_args, parse_flags


def test_parse_forms():
    assert parse_flags(["--tp", "8", "--enforce-eager", "--x=1", "--y", "a=b"]) == [
        ("--tp", "8"),
        ("--enforce-eager", None),
        ("--x", "1"),
        ("--y", "a=b"),
    ]


def test_value_without_flag_is_an_error():
    with pytest.raises(ValueError, match="'8' does not follow a --flag"):
        parse_flags(["8"])


def test_role_flag_replaces_in_place_and_new_flags_append():
    base = ["--model", "/m", "--max-num-seqs", "64", "--gpu-memory-utilization", "0.75"]
    role = ["--max-num-seqs", "16", "--enforce-eager"]
    assert merge_args(base, role) == [
        "--model", "/m", "--max-num-seqs", "16", "--gpu-memory-utilization", "0.75",
        "--enforce-eager",
    ]  # fmt: skip


def test_equals_form_overrides_spaced_form():
    assert merge_args(["--max-model-len", "16384"], ["--max-model-len=8192"]) == [
        "--max-model-len",
        "8192",
    ]


def test_flag_value_last_wins_and_boolean_is_empty_string():
    args = ["--tp", "4", "--enforce-eager", "--tp", "8"]
    assert flag_value(args, "--tp") == "8"
    assert flag_value(args, "--enforce-eager") == ""
    assert flag_value(args, "--missing") is None


names = st.sampled_from(["--a", "--b", "--c", "--d"])
values = st.one_of(st.none(), st.sampled_from(["1", "2", "x"]))
flag_lists = st.lists(st.tuples(names, values), max_size=6).map(
    lambda pairs: [t for n, v in dict(pairs).items() for t in ([n] if v is None else [n, v])]
)


@given(flag_lists, flag_lists)
def test_merge_is_idempotent_and_override_wins(base, override):
    merged = merge_args(base, override)
    assert merge_args(merged, override) == merged
    for name, value in parse_flags(override):
        assert flag_value(merged, name) == ("" if value is None else value)
    for name, value in parse_flags(base):
        if flag_value(override, name) is None:
            assert flag_value(merged, name) == ("" if value is None else value)
