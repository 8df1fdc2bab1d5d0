"""Endpoint checks: colocated mode's chunked-prefill knobs."""

from __future__ import annotations

import copy

import pytest

from core.versions import DLC_VLLM_IMAGE
from settings import parse_settings
from tests.conftest import edit
from tests.settings.problems import followed, only_problem

NS = "hyperpod-dpd"


def test_a_step_budget_below_the_batch_is_refused_with_a_value_vllm_starts_with(dev_raw):
    edit(dev_raw, f"{NS}:endpoint.colocated", {"maxNumBatchedTokens": 16})
    message = only_problem(dev_raw)
    assert message.startswith("hyperpod-dpd:endpoint.colocated.maxNumBatchedTokens: got 16;")
    assert "at least endpoint.decode.maxNumSeqs (32)" in message
    assert "2048" in message


def test_a_chunked_prefill_flag_given_twice_names_both_keys(dev_raw):
    edit(dev_raw, f"{NS}:endpoint.colocated", {"maxNumBatchedTokens": 4096})
    edit(dev_raw, f"{NS}:endpoint.decode.args", ["--max-num-batched-tokens=8192"])
    message = only_problem(dev_raw)
    assert "hyperpod-dpd:endpoint.colocated.maxNumBatchedTokens" in message
    assert "remove --max-num-batched-tokens from hyperpod-dpd:endpoint.decode.args" in message


@pytest.mark.parametrize("key", ["maxNumBatchedTokens", "maxNumPartialPrefills",
                                 "longPrefillTokenThreshold"])  # fmt: skip
def test_chunked_prefill_knobs_are_positive_whole_numbers(dev_raw, key):
    for bad in (0, "2048", 1.5):
        raw = edit(copy.deepcopy(dev_raw), f"{NS}:endpoint.colocated", {key: bad})
        assert only_problem(raw).startswith(f"hyperpod-dpd:endpoint.colocated.{key}: got")


def test_the_worker_image_pinned_by_digest_or_refused_with_what_is_wrong(dev_raw):
    pinned = f"{DLC_VLLM_IMAGE}@sha256:{'c0ffee00' * 8}"
    edit(dev_raw, f"{NS}:endpoint.image", pinned)
    assert parse_settings(dev_raw).endpoint.image == pinned
    edit(dev_raw, f"{NS}:endpoint.image", pinned + "0")
    message = only_problem(dev_raw)
    assert message.startswith(f"{NS}:endpoint.image: got ") and "has 65 characters" in message
    # The fix keeps the tag the user chose (the digest is theirs to copy again).
    assert parse_settings(followed(dev_raw, message)).endpoint.image == DLC_VLLM_IMAGE
