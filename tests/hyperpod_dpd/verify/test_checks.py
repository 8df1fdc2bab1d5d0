"""The pure judgements, on the recorded objects."""

from __future__ import annotations

import copy

from hyperpod_dpd.verify import causes
from hyperpod_dpd.verify.endpoint import endpoint_facts, pod_problem
from hyperpod_dpd.verify.kv_transfer import judge_kv
from hyperpod_dpd.verify.matching import long_prompt_retrievals
from hyperpod_dpd.verify.prompts import long_prompt
from hyperpod_dpd.verify.results import FAIL, PASS
from tests.hyperpod_dpd.verify.fake_kube import RECORDED, recorded_json

IEC = recorded_json("iec-llama-3-3-70b.json")
PODS = recorded_json("pods-inference.json")["items"]


def test_endpoint_facts_of_the_recorded_iec():
    facts = endpoint_facts(IEC)
    assert facts.is_dpd and facts.threshold == 4096
    assert (facts.model, facts.max_model_len) == ("/opt/ml/model", 16384)


def test_role_args_replace_worker_args():
    iec = copy.deepcopy(IEC)
    iec["spec"]["pdSpec"]["decodingSpec"]["args"] += ["--max-model-len=8192"]
    iec["spec"]["worker"]["args"] += ["--served-model-name", "llama-70b"]
    facts = endpoint_facts(iec)
    assert (facts.model, facts.max_model_len) == ("llama-70b", 8192)


def test_colocated_iec():
    iec = copy.deepcopy(IEC)
    del iec["spec"]["pdSpec"]
    facts = endpoint_facts(iec)
    assert not facts.is_dpd and facts.threshold is None


def test_pod_problems():
    prefill, _, other = PODS
    assert pod_problem(prefill) is None
    cause, detail = pod_problem(other)
    assert cause is causes.PODS_PENDING
    assert "2 Insufficient nvidia.com/gpu" in detail
    pulling = copy.deepcopy(prefill)
    pulling["status"] = {
        "phase": "Pending",
        "conditions": [{"type": "PodScheduled", "status": "True"}],
        "containerStatuses": [
            {
                "name": "prefill-llama-3-3-70b",
                "ready": False,
                "state": {"waiting": {"reason": "ErrImagePull"}},
            }
        ],
    }
    cause, detail = pod_problem(pulling)
    assert cause is causes.PODS_STARTING
    assert detail.endswith("Pending, 0/3 ready; prefill-llama-3-3-70b: ErrImagePull")


def test_kv_lines_of_the_long_prompt_only():
    """Short prompts go straight to the decoder and may log 'Retrieved 0 out of 12': not a
    failed transfer. Only lines near the long prompt's size, of its request, count."""
    long = long_prompt(4096, "/opt/ml/model", 16384)
    healthy = (RECORDED / "decoder-kv-healthy.log").read_text().replace("{req_id}", "cmpl-b")
    text = (
        "[req_id=cmpl-a] Retrieved 0 out of 12 required tokens (from 12 total tokens).\n" + healthy
    )
    lines = long_prompt_retrievals(text, long)
    assert len(lines) == 8 and {r.req_id for r in lines} == {"cmpl-b"}
    received, speed = judge_kv(lines, {}, {})
    assert (received.result, speed.result) == (PASS, PASS)
    assert received.detail == "Retrieved 6035 out of 6035 required tokens (8 TP ranks)"


def test_partial_retrieval_passes_with_a_note_and_zero_fails():
    long = long_prompt(4096, "/opt/ml/model", 16384)
    partial = "Retrieved 5888 out of 6035 required tokens (from 6035 total tokens)."
    received, speed = judge_kv(long_prompt_retrievals(partial, long), {}, {})
    assert received.result == PASS and received.detail.endswith("1 rank(s) partial")
    assert speed.detail == "the lines report no throughput"
    zero = "Retrieved 0 out of 6035 required tokens (from 6035 total tokens)."
    received, _ = judge_kv(long_prompt_retrievals(zero, long), {}, {"recompute": "seed unset"})
    assert received.result == FAIL
    assert (
        received.detail == "Retrieved 0 out of 6035 required tokens on 1 of 1 TP ranks; seed unset"
    )


def test_a_hash_seed_from_a_secret_is_not_reported_as_unset():
    from hyperpod_dpd.verify.kv_transfer import kv_diagnostics
    from hyperpod_dpd.verify.results import Target

    target = Target("llama", "inference", None)

    def pod(name: str, role: str, env: list[dict]) -> dict:
        container = {"name": target.container(role), "image": "img", "env": env}
        return {"metadata": {"name": name}, "spec": {"containers": [container]}}

    secret = {"name": "PYTHONHASHSEED", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}
    pods = {
        "prefill": [pod("p", "prefill", [{"name": "PYTHONHASHSEED", "value": "0"}])],
        "decode": [pod("d", "decode", [secret]), pod("d2", "decode", [])],
    }
    recompute = kv_diagnostics(pods, target)["recompute"]
    assert recompute.startswith(
        "PYTHONHASHSEED prefill 0, decode from a Secret or field/unset; one image"
    )


def test_one_tag_pulled_as_two_builds_is_named_with_the_pods_running_each():
    from hyperpod_dpd.verify.kv_transfer import kv_diagnostics
    from hyperpod_dpd.verify.results import Target

    target = Target("llama", "inference", None)
    seed = [{"name": "PYTHONHASHSEED", "value": "0"}]

    def pod(name: str, role: str, digest: str) -> dict:
        container = {"name": target.container(role), "image": "repo/vllm:v1", "env": seed}
        # containerd's imageID (repo@sha256:...), and the scheme older runtimes put before it
        scheme = "docker-pullable://" if role == "prefill" else ""
        status = {"name": target.container(role), "imageID": f"{scheme}repo/vllm@sha256:{digest}"}
        return {"metadata": {"name": name}, "spec": {"containers": [container]},
                "status": {"containerStatuses": [status]}}  # fmt: skip

    same = {"prefill": [pod("p", "prefill", "a" * 64)], "decode": [pod("d", "decode", "a" * 64)]}
    assert kv_diagnostics(same, target)["recompute"].endswith("; one image for both roles")
    moved = {"prefill": [pod("p", "prefill", "a" * 64)], "decode": [pod("d", "decode", "b" * 64)]}
    assert kv_diagnostics(moved, target)["recompute"].endswith(
        "one image for both roles, but the pods run 2 builds of it (sha256:aaaaaaaaaaaa... on p; "
        "sha256:bbbbbbbbbbbb... on d): pin it by digest"
    )
