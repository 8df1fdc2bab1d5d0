"""hyperpod-dpd-pd-buffer-capacity (policies/rules/endpoint/pd_buffer_capacity.py): a buffer smaller
than one max-length transfer, and a shortfall against the assumed load (advisory) or the
load the stack declares (mandatory)."""

from __future__ import annotations

from policies.rules import Limits
from tests.policies.conftest import named, set_env
from tests.policies.rules.helpers import RULES, findings


def test_buffer_smaller_than_one_max_len_transfer(dev):
    set_env(dev, "PD_BUFFER_SIZE", str(512 * 2**20))
    found = [m for _, m in findings("hyperpod-dpd-pd-buffer-capacity", dev)]
    assert found[0] == (
        "PD_BUFFER_SIZE 0.5 GiB holds 51 LMCache chunks, fewer than the 64 of one 16384-token "
        "prompt: the longest prompts can never be transferred; raise "
        "hyperpod-dpd:endpoint.pdBufferSize to 1GiB"
    )


def test_assumed_load_shortfall_is_advisory(dev):
    set_env(dev, "PD_BUFFER_SIZE", str(6 * 2**30))  # 614 chunks: 25 transfers < 32 max-num-seqs
    (finding,) = RULES["hyperpod-dpd-pd-buffer-capacity"].check(dev, Limits())
    assert finding.enforcement == "advisory"
    assert finding.message == (
        "PD_BUFFER_SIZE 6 GiB holds 25 transfers of 6035 tokens at once, fewer than the 32 "
        "assumed (set hyperpod-dpd:endpoint.expectedPromptTokens and expectedInFlightTransfers "
        "to size for your load); the decoder will log 'Failed to allocate memory object'. Set "
        "hyperpod-dpd:endpoint.pdBufferSize to 8GiB or add decode replicas"
    )


def test_expected_load_shortfall_is_mandatory(dev):
    notes = named(dev, "endpoint-iec").props["metadata"]["annotations"]
    notes["hyperpod-dpd/expected-prompt-tokens"] = "8000"
    notes["hyperpod-dpd/expected-in-flight-transfers"] = "64"
    (finding,) = RULES["hyperpod-dpd-pd-buffer-capacity"].check(dev, Limits())
    assert finding.enforcement is None  # the rule's own level: mandatory
    assert (
        "holds 25 transfers of 8000 tokens at once, fewer than the 64 expected" in finding.message
    )
    assert finding.message.endswith(
        "Set hyperpod-dpd:endpoint.pdBufferSize to 20GiB or add decode replicas"
    )
