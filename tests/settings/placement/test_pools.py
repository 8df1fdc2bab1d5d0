"""Several endpoints, pinned groups and per-role settings judged as the scheduler and vLLM judge
them: where each pool can run (settings/placement/pools.py), room for it there at its maximum
replicas (settings/placement/pool_capacity.py), and each role's TP (settings/endpoint/sizing.py)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from policies.gate import judge
from settings import parse_settings
from specs.desired import desired_state
from tests.conftest import canary_raw, edit, stack_raw
from tests.settings.problems import followed, only_problem, problems_of

NS = "hyperpod-dpd"
P5, P5E = "ml.p5.48xlarge", "ml.p5e.48xlarge"


def _group(kind: str, count: int, role: str) -> dict[str, Any]:
    return {"instanceType": kind, "instanceCount": count, "role": role}


def pinned_pair(a_type: str = P5, b_type: str = P5) -> dict[str, Any]:
    """Two DPD endpoints, `a` and `b`, each pinned to a prefill and a decode group of its own."""
    raw = stack_raw("dev")
    endpoint = raw.pop(f"{NS}:endpoint")
    groups = {"system": raw[f"{NS}:instanceGroups"]["system"]}
    for key, kind in (("a", a_type), ("b", b_type)):
        groups[f"prefill-{key}"] = _group(kind, 1, "prefill")
        groups[f"decode-{key}"] = _group(kind, 1, "decode")
    raw[f"{NS}:instanceGroups"] = groups
    raw[f"{NS}:endpoints"] = {
        key: {**copy.deepcopy(endpoint), "name": key, "groups": [f"prefill-{key}", f"decode-{key}"]}
        for key in ("a", "b")
    }
    return raw


def _fixed(raw, message):
    """The stack with `message`'s fix followed no longer shows `message`."""
    after = followed(raw, message)
    try:
        return message not in [p for p in problems_of(after)]
    except BaseException:  # pytest's Failed: parse_settings took it
        return True


# --- 7: one instance type per pool, judged per endpoint --------------------------------------


def test_two_endpoints_pinned_to_groups_of_two_types_plan():
    s = parse_settings(pinned_pair(P5, P5E))
    judged = judge(desired_state(s, NS, "dev"))
    assert not [v for v in judged if v.enforcement == "mandatory"], judged


def test_an_unpinned_pool_over_groups_of_two_types_is_refused():
    raw = pinned_pair(P5, P5E)
    del raw[f"{NS}:endpoints"]["b"]["groups"]  # b's decode pool: decode-a and decode-b
    message = next(p for p in problems_of(raw) if "one instance type over the decode" in p)
    assert message.startswith(
        f'{NS}:instanceGroups: got {{"decode-a": "{P5}", "decode-b": "{P5E}"}}'
    )
    assert "b's decode pool" in message and "endpoints.b.groups" in message


# --- 1: capacity follows placement ------------------------------------------------------------


def test_a_pinned_pool_is_counted_against_its_own_group_only():
    """Before: decode-a's 2 replicas were counted against both decode groups' 2 nodes."""
    raw = pinned_pair()
    edit(raw, f"{NS}:endpoints.a.decode.replicas", 2)
    edit(raw, f"{NS}:instanceGroups.decode-b.instanceCount", 3)
    message = only_problem(raw)
    assert message.startswith(f"{NS}:instanceGroups.decode-a.instanceCount: got 1")
    assert "group decode-a has 1 node, the pools want 2 (a decode 2 (" in message
    assert f"{NS}:endpoints.a.decode.replicas" in message
    assert _fixed(raw, message)


def test_a_pinned_shortfall_is_not_hidden_by_an_unpinned_pool_s_spare_nodes():
    """a pinned to decode-a (1 node) at 2 replicas; b unpinned at 1 over both decode groups (6
    nodes): together 3 of 6, but only b can use decode-b's nodes."""
    raw = pinned_pair()
    edit(raw, f"{NS}:endpoints.a.decode.replicas", 2)
    edit(raw, f"{NS}:endpoints.b.groups", ["prefill-b"])
    del raw[f"{NS}:endpoints"]["b"]["groups"]
    edit(raw, f"{NS}:instanceGroups.decode-b.instanceCount", 5)
    edit(raw, f"{NS}:instanceGroups.prefill-b.instanceCount", 2)
    problems = [p for p in problems_of(raw) if "nodes for every pool" in p]
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"{NS}:instanceGroups.decode-a.instanceCount: got 1")


def test_a_colocated_endpoint_is_counted_against_its_colocated_groups_only():
    """The canary's baseline runs on the colocated group (2 nodes) alone: 3 replicas do not fit
    there, whatever the prefill and decode groups hold."""
    raw = canary_raw()
    edit(raw, f"{NS}:endpoints.baseline.replicas", 3)
    message = only_problem(raw)
    assert message.startswith(f"{NS}:instanceGroups.colocated.instanceCount: got 2")
    assert f"baseline colocated 3 ({NS}:endpoints.baseline.replicas)" in message
    assert _fixed(raw, message)


def test_a_single_colocated_endpoint_on_a_colocated_group_counts_that_group():
    raw = stack_raw("dev")
    edit(raw, f"{NS}:endpoint.mode", "colocated")
    edit(raw, f"{NS}:endpoint.replicas", 2)
    edit(raw, f"{NS}:instanceGroups.colocated", _group(P5, 1, "colocated"))
    message = only_problem(raw)
    assert message.startswith(f"{NS}:instanceGroups.colocated.instanceCount: got 1")


def test_a_single_endpoint_at_fixed_replicas_is_judged_too(dev_raw):
    edit(dev_raw, f"{NS}:endpoint.decode.replicas", 3)
    message = only_problem(dev_raw)
    assert message.startswith(f"{NS}:instanceGroups.decode.instanceCount: got 1")
    assert "2 replicas would stay Pending" in message
    assert _fixed(dev_raw, message)


# --- 2: each role's TP -----------------------------------------------------------------------


def test_a_prefill_tp_that_does_not_divide_the_heads_is_refused():
    raw = canary_raw()
    edit(raw, f"{NS}:endpoints.candidate.prefill.tensorParallelSize", 3)
    message = only_problem(raw)
    assert message.startswith(f"{NS}:endpoints.candidate.prefill.tensorParallelSize: got 3")
    assert "prefill TP does not divide llama-3.3-70b's 64 attention heads" in message
    assert _fixed(raw, message)


def test_a_prefill_tp_in_its_args_is_judged_where_it_is_given():
    raw = canary_raw()
    edit(raw, f"{NS}:endpoints.candidate.prefill.args", ["--tensor-parallel-size", "6"])
    message = only_problem(raw)
    assert message.startswith(
        f"{NS}:endpoints.candidate.prefill.args: got '--tensor-parallel-size 6'"
    )


# --- 6: no exit 3 ------------------------------------------------------------------------------


def test_a_colocated_endpoint_beside_others_without_a_colocated_group_names_its_mode():
    raw = canary_raw()
    del raw[f"{NS}:instanceGroups"]["colocated"]
    message = only_problem(raw)
    assert message.startswith(f"{NS}:endpoints.baseline.mode: got 'colocated'")
    assert "no instance group has that role" in message
    assert _fixed(raw, message)


def test_an_endpoint_pinned_to_the_system_group_names_its_groups():
    raw = canary_raw()
    edit(raw, f"{NS}:endpoints.candidate.groups", ["system"])
    message = only_problem(raw)
    assert message.startswith(f'{NS}:endpoints.candidate.groups: got ["system"]')
    assert "system: a group of role system" in message


# --- 3: one staged checkpoint, one model -----------------------------------------------------


def test_two_endpoints_of_two_models_over_one_checkpoint_are_refused_by_both_keys():
    """An S3 checkpoint names no model the check of checkpoint.source could compare."""
    raw = canary_raw()
    edit(raw, f"{NS}:checkpoint", {"source": "s3://my-models/llama-3.3-70b/"})
    edit(raw, f"{NS}:endpoints.candidate.model", "llama-3.1-8b")
    edit(raw, f"{NS}:endpoints.candidate.prefill.tensorParallelSize", 4)
    message = only_problem(raw)
    assert message.startswith(f"{NS}:endpoints.candidate.model: got 'llama-3.1-8b'")
    assert f"the model of {NS}:endpoints.baseline.model (llama-3.3-70b)" in message
    assert _fixed(raw, message)


# --- 5: maxNumSeqs within the default step budget ---------------------------------------------


def test_a_batch_above_vllm_s_default_step_budget_is_refused():
    raw = canary_raw()
    edit(raw, f"{NS}:endpoints.candidate.decode.maxNumSeqs", 10000)
    message = only_problem(raw)
    assert message.startswith(f"{NS}:endpoints.candidate.decode.maxNumSeqs: got 10000")
    assert "at most 8192, the step budget (--max-num-batched-tokens) vLLM 0.19.0" in message
    assert _fixed(raw, message)
    edit(raw, f"{NS}:endpoints.candidate.decode.args", ["--max-num-batched-tokens", "16384"])
    assert parse_settings(raw)  # a budget given: the batch fits it


def test_the_default_step_budget_follows_the_pool_s_gpu():
    """A colocated endpoint on L40S nodes: vLLM's default budget there is 2048."""
    raw = stack_raw("dev")
    edit(raw, f"{NS}:endpoint.mode", "colocated")
    edit(raw, f"{NS}:endpoint.model", "llama-3.1-8b")
    edit(raw, f"{NS}:endpoint.tensorParallelSize", 4)
    edit(raw, f"{NS}:checkpoint.source", "hf://meta-llama/Llama-3.1-8B-Instruct")
    edit(raw, f"{NS}:endpoint.replicas", 1)
    edit(raw, f"{NS}:endpoint.decode.maxNumSeqs", 4096)
    del raw[f"{NS}:instanceGroups"]["prefill"]
    edit(raw, f"{NS}:instanceGroups.decode.instanceType", "ml.g6e.12xlarge")
    message = next(p for p in problems_of(raw) if "maxNumSeqs: got 4096" in p)
    assert "at most 2048" in message and "ml.g6e.12xlarge" in message


# --- 4: namespaces the stack itself owns ---------------------------------------------------------


@pytest.mark.parametrize(
    ("namespace", "user"),
    [
        ("cert-manager", "the cert-manager add-on"),
        ("hyperpod-inference-system", "the inference operator add-on"),
        ("hyperpod-dpd-system", "the checkpoint staging Job"),
        ("aws-hyperpod", "the dependencies chart's health checks"),
        ("kube-system", "the HyperPod dependencies chart"),
    ],
)
def test_an_endpoint_in_a_namespace_the_stack_installs_into_is_refused(namespace, user):
    raw = canary_raw()
    edit(raw, f"{NS}:endpoints.candidate.namespace", namespace)
    message = only_problem(raw)
    assert message.startswith(f"{NS}:endpoints.candidate.namespace: got '{namespace}'")
    assert f"({namespace} is {user}" in message and "AlreadyExists" in message
    assert _fixed(raw, message)
