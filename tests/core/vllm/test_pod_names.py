"""core/vllm/pod_names.py: a pool's pods by their name's structure, on names made the way Kubernetes
makes them (a Deployment's ReplicaSet hash, the pod's random suffix), endpoints `llama` and
`llama-small` side by side in every role and mode."""

from __future__ import annotations

import random
import re

import pytest

from core.vllm.pod_names import (
    DEPLOYMENT_NAME_MAX,
    pod_name_pattern,
    worker_deployment,
)
from core.vllm.pod_names import pod_name as k8s_pod_name

POOLS = ("prefill", "decode", "colocated")


def _matches(pattern: str, name: str) -> bool:
    return re.fullmatch(pattern, name) is not None  # PromQL's =~ is anchored at both ends


def test_the_operator_names_its_deployments_after_role_and_endpoint():
    assert [worker_deployment("llama", p) for p in POOLS] == [
        "prefill-llama",
        "decode-llama",
        "llama",
    ]
    with pytest.raises(ValueError):
        worker_deployment("llama", "router")


@pytest.mark.parametrize("pool", POOLS)
def test_a_pools_pattern_takes_its_own_pods_and_no_siblings(pool):
    """Every pod of every pool of llama, llama-small, prefill-llama (a colocated endpoint),
    and DPD/colocated variants of both names: each pool's pattern takes its own pods only."""
    rng = random.Random(20261205)
    deployments = {
        worker_deployment(name, p) for name in ("llama", "llama-small", "small") for p in POOLS
    }
    pods = {d: [k8s_pod_name(d, rng) for _ in range(200)] for d in deployments}
    mine = worker_deployment("llama", pool)
    pattern = pod_name_pattern(mine)
    for deployment, names in pods.items():
        for name in names:
            assert _matches(pattern, name) == (deployment == mine), (pattern, name)


def test_the_longest_deployment_name_keeps_whole_pod_names():
    rng = random.Random(7)
    longest = "d" + "x" * (DEPLOYMENT_NAME_MAX - 1)
    for _ in range(500):
        assert _matches(pod_name_pattern(longest), k8s_pod_name(longest, rng))
    one_more = longest + "x"
    cut = [k8s_pod_name(one_more, rng) for _ in range(500)]
    assert not all(_matches(pod_name_pattern(one_more), n) for n in cut)  # why the limit exists


def test_a_name_that_is_no_dns_label_is_refused():
    with pytest.raises(ValueError):
        pod_name_pattern("llama.*")
