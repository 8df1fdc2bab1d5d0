"""The plan shows a new worker's start per endpoint and pool, by phase, caches off and on:
summary.md's table and plan.json's coldStart, which follow the endpoint's cache."""

from __future__ import annotations

import json

from hyperpod_dpd.plan.planner import make_plan
from tests.conftest import ROOT
from tests.hyperpod_dpd.diff.test_diff import head_with

PHASES = {"imagePull", "weightsRead", "loadToGpu", "warmUp", "total"}


def test_the_canary_plan_estimates_each_pool_caches_off_and_on(tmp_path):
    out = tmp_path / "plan"
    make_plan(ROOT, "canary", out)
    cold = json.loads((out / "plan.json").read_text())["coldStart"]
    assert {e: sorted(pools) for e, pools in cold.items()} == {
        "baseline": ["colocated"],
        "candidate": ["decode", "prefill"],
    }
    prefill = cold["candidate"]["prefill"]
    assert set(prefill["cachesOff"]) == set(prefill["cachesOn"]) == PHASES
    # 70B from S3: the documented 5-10 minutes of reading, plus the image; from a warm node's
    # NVMe with the image pre-pulled: about a minute.
    assert 300 <= prefill["cachesOff"]["weightsRead"] <= 610
    assert prefill["cachesOff"]["total"] > 600 and prefill["cachesOn"]["total"] < 120
    assert prefill["asConfigured"] == prefill["cachesOff"]  # the canary caches nothing
    summary = (out / "summary.md").read_text()
    assert "## Cold start, scheduled to ready (estimate: caches off / on)" in summary
    row = next(line for line in summary.splitlines() if line.startswith("| candidate | decode"))
    assert "ml.p5.48xlarge" in row and "267 s / 0 s" in row


def test_a_cached_endpoint_starts_as_its_caches_say(tmp_path):
    cached = (
        "      maxModelLen: 16384\n      routingThreshold: 4096\n",
        "      maxModelLen: 16384\n      routingThreshold: 4096\n"
        "      cache:\n        weights: true\n        image: true\n",
    )
    out = head_with(tmp_path, cached, stack="canary")
    cold = json.loads((out / "plan.json").read_text())["coldStart"]
    assert cold["candidate"]["decode"]["asConfigured"] == cold["candidate"]["decode"]["cachesOn"]
    assert cold["baseline"]["colocated"]["asConfigured"]["imagePull"] > 0
    assert "weights, image" in (out / "summary.md").read_text()


def test_the_first_start_is_a_cache_miss_even_with_both_caches_on(tmp_path):
    """The operator warms a node beside the first pods, not before them (AWS model caching page:
    a pod on a node whose cache is not yet available loads from the remote source): the first
    worker's start is the caches-off one; the caches make a later worker's, on a warm node."""
    cached = (
        "      maxModelLen: 16384\n      routingThreshold: 4096\n",
        "      maxModelLen: 16384\n      routingThreshold: 4096\n"
        "      cache:\n        weights: true\n        image: true\n",
    )
    out = head_with(tmp_path, cached, stack="canary")
    decode = json.loads((out / "plan.json").read_text())["coldStart"]["candidate"]["decode"]
    assert decode["firstStart"] == decode["cachesOff"]
    assert decode["warmNodeStart"] == decode["cachesOn"]
    assert decode["firstStart"]["total"] > 600 > 120 > decode["warmNodeStart"]["total"]
    summary = (out / "summary.md").read_text()
    row = next(line for line in summary.splitlines() if line.startswith("| candidate | decode"))
    first, later = row.rstrip(" |").split(" | ")[-2:]
    assert first == f"{decode['cachesOff']['total']} s"
    assert later == f"{decode['cachesOn']['total']} s"
    assert "| first start, cold node | later start, warm node |" in summary
    assert "is a cache miss: it reads the weights from S3 and pulls the image" in summary
