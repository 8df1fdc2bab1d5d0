"""A DPD endpoint's pools scaled as a pair (settings/endpoint/scaling_pair.py) and the capacity
`advise` records beside a target (settings/endpoint/scaling_signal.py): a ratio needs both pools
autoscaled and a follower that can follow the leader's maximum; a colocated endpoint has no ratio;
a recorded capacity is in the pool's own unit. Each refusal names the key; its fix, followed,
parses."""

from __future__ import annotations

from settings import parse_settings
from tests.conftest import canary_raw, edit
from tests.settings.problems import followed, only_problem

NS = "hyperpod-dpd"
CANDIDATE = f"{NS}:endpoints.candidate"
BASELINE = f"{NS}:endpoints.baseline"
PREFILL = {"minReplicas": 1, "maxReplicas": 1, "metric": "prompt-tokens-per-second",
           "target": 18000}  # fmt: skip
DECODE = {"minReplicas": 1, "maxReplicas": 1, "metric": "running-requests", "target": 24}


def _paired(ratio, prefill=PREFILL, decode=DECODE, groups=(1, 1)) -> dict:
    raw = canary_raw()
    edit(raw, f"{NS}:instanceGroups.prefill.instanceCount", groups[0])
    edit(raw, f"{NS}:instanceGroups.decode.instanceCount", groups[1])
    scaling = {"prefill": prefill, "decode": decode, "ratio": ratio}
    edit(raw, f"{CANDIDATE}.autoscaling", {k: v for k, v in scaling.items() if v is not None})
    return raw


def test_a_ratio_of_two_autoscaled_pools_is_taken_and_names_its_follower():
    a = parse_settings(_paired({"prefill": 1, "decode": 1})).endpoints["candidate"].autoscaling
    assert (a.ratio.follower, a.ratio.leader) == ("decode", "prefill")  # decode on a tie
    raw = _paired({"prefill": 2, "decode": 1}, {**PREFILL, "maxReplicas": 2}, groups=(2, 1))
    a = parse_settings(raw).endpoints["candidate"].autoscaling
    assert (a.ratio.follower, a.ratio.leader) == ("prefill", "decode")


def test_a_ratio_with_one_pool_not_autoscaled_is_refused():
    raw = _paired({"prefill": 1, "decode": 2}, decode=None)
    message = only_problem(raw)
    assert message.startswith(f"{CANDIDATE}.autoscaling.ratio: got ")
    assert "but decode has no autoscaling" in message
    assert "remove hyperpod-dpd:endpoints.candidate.autoscaling.ratio" in message


def test_a_follower_that_cannot_follow_the_leaders_maximum_is_refused_with_its_maximum():
    """1:2 with prefill up to 2: decode must reach 4; the fix sets it, and then the groups must
    hold it (their own check)."""
    raw = _paired({"prefill": 1, "decode": 2}, {**PREFILL, "maxReplicas": 2},
                  {**DECODE, "maxReplicas": 3}, groups=(2, 4))  # fmt: skip
    message = only_problem(raw)
    key = f"{CANDIDATE}.autoscaling.decode.maxReplicas"
    assert message.startswith(f"{key}: got 3; allowed: at least 4: ratio 1:2 holds decode at 2 ")
    fixed = parse_settings(followed(raw, message)).endpoints["candidate"].autoscaling
    assert fixed.decode.max_replicas == 4


def test_a_colocated_endpoint_has_no_ratio():
    raw = canary_raw()
    edit(raw, f"{BASELINE}.autoscaling", {"minReplicas": 1, "maxReplicas": 2,
         "metric": "running-requests", "target": 8, "ratio": {"prefill": 1, "decode": 1}})  # fmt: skip
    message = only_problem(raw)
    assert message.startswith(f"{BASELINE}.autoscaling: got 'prefill/decode/ratio'; ")
    fixed = parse_settings(followed(raw, message)).endpoints["baseline"].autoscaling
    assert fixed.ratio is None and fixed.max_replicas == 2


def test_a_capacity_recorded_in_another_unit_than_the_pools_signal_is_refused():
    capacity = {"metric": "running-requests", "perReplica": 24, "within": "TPOT p50 <= 15 ms"}
    raw = _paired(None, decode={**DECODE, "metric": "kv-cache-usage", "target": 0.8,
                                "capacity": capacity})  # fmt: skip
    message = only_problem(raw)
    key = f"{CANDIDATE}.autoscaling.decode.capacity.metric"
    assert message.startswith(f"{key}: got 'running-requests'; allowed: the pool's own signal ")
    assert "remove hyperpod-dpd:endpoints.candidate.autoscaling.decode.capacity" in message
    raw = _paired(None, decode={**DECODE, "capacity": capacity})
    decode = parse_settings(raw).endpoints["candidate"].autoscaling.decode
    assert decode.capacity.per_replica == 24


def test_the_prompt_tokens_signal_is_a_built_in_metric():
    prefill = parse_settings(_paired(None)).endpoints["candidate"].autoscaling.prefill
    assert prefill.metric == "prompt-tokens-per-second"
