"""`hyperpod-dpd verify` end to end against recorded broken deployments: each fails on the
check that names its cause, with the detail, cause, fix and reference it reports (KV cache
recomputed or moved at TCP speed, PD roles wrong, pods pending or crash-looping, the
endpoint not ready, the router's threshold, a full PD buffer, a prompt pod that never
starts, an unknown model, what the operator rendered into the pods), and the text table
of a failing run."""

from __future__ import annotations

import json
import re

from hyperpod_dpd.verify.results import FAIL, PASS, SKIP
from tests.hyperpod_dpd.verify.conftest import ALL_CHECKS, PROMPT_CHECKS, failed_only
from tests.hyperpod_dpd.verify.fake_kube import (
    DECODE_POD,
    NAME,
    NAMESPACE,
    PREFILL_POD,
    recorded_json,
)


def test_decoder_recomputed_retrieved_0(fake, verify):
    fake.kv_variant = "recomputed"  # Retrieved 0 out of 6035
    check = failed_only(verify(), "KV cache received")
    assert check["detail"].startswith("Retrieved 0 out of 6035 required tokens on 8 of 8 TP ranks")
    # What the pods run with, to rule the usual causes in or out.
    assert check["detail"].endswith("PYTHONHASHSEED prefill 0, decode 0; one image for both roles")
    assert "PYTHONHASHSEED" in check["cause"] and "different images" in check["cause"]
    assert check["ref"] == "docs/troubleshooting.md#kv-transfer-absent"


def test_kv_transfer_at_tcp_speed(fake, verify):
    fake.kv_variant = "tcp"  # 0.85 GB/s
    check = failed_only(verify(), "KV transfer throughput")
    assert re.match(r"0\.8\d+ GB/s \(slowest of 8 TP ranks\) < 1 GB/s", check["detail"])
    assert "< 1 GB/s" in check["detail"]
    assert "vpc.amazonaws.com/efa requested" in check["detail"]
    assert "TCP" in check["cause"] and "EFA is not in use" in check["cause"]
    assert check["ref"] == "docs/troubleshooting.md#kv-transfer-slow"


def test_same_role_on_both_pods(fake, verify):
    fake.replace_in_log(
        DECODE_POD, f"decode-{NAME}", "'pd_role': 'receiver'", "'pd_role': 'sender'"
    )
    result = verify()
    check = failed_only(result, "decode role 'receiver'")
    assert check["detail"] == "'pd_role': 'sender'"
    assert "both report 'sender'" in check["cause"]
    assert result.check("prefill role 'sender'")["result"] == PASS


def test_roles_swapped(fake, verify):
    fake.replace_in_log(
        DECODE_POD, f"decode-{NAME}", "'pd_role': 'receiver'", "'pd_role': 'sender'"
    )
    fake.replace_in_log(
        PREFILL_POD, f"prefill-{NAME}", "'pd_role': 'sender'", "'pd_role': 'receiver'"
    )
    result = verify()
    for name in ("prefill role 'sender'", "decode role 'receiver'"):
        assert result.check(name)["result"] == FAIL
        assert "roles wired backwards" in result.check(name)["cause"]


def test_no_pd_role_line(fake, verify):
    fake.replace_in_log(PREFILL_POD, f"prefill-{NAME}", "'pd_role': 'sender', ", "")
    check = failed_only(verify(), "prefill role 'sender'")
    assert check["detail"] == "no 'pd_role' line"
    assert "has no 'pd_role'" in check["cause"]


def test_decode_pod_pending_for_lack_of_gpu_nodes(fake, verify):
    fake.pod(NAMESPACE, DECODE_POD)["status"] = recorded_json(
        "pod-status-pending-unschedulable.json"
    )
    result = verify()
    check = failed_only(result, "decode pods")
    assert (
        "Pending, not scheduled: 0/3 nodes are available: 1 Insufficient nvidia.com/gpu"
        in (check["detail"])
    )
    assert check["cause"].startswith("pods pending: not enough GPU/EFA nodes")
    assert "instanceGroups counts" in check["fix"]
    assert f"kubectl describe pod {DECODE_POD} -n {NAMESPACE}" in check["fix"]
    results = result.results()
    assert results["decode role 'receiver'"] == SKIP
    skipped = [n for n, r in results.items() if r == SKIP]
    assert skipped[:2] == ["decoders newer than prefillers", "decode role 'receiver'"]
    assert skipped[2:] == PROMPT_CHECKS
    assert fake.created == []  # no prompt is sent to an endpoint that cannot answer


def test_worker_crash_looping(fake, verify):
    pod = fake.pod(NAMESPACE, DECODE_POD)
    worker = pod["status"]["containerStatuses"][0]
    worker.update(
        ready=False,
        restartCount=4,
        state={"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 2m40s"}},
    )
    check = failed_only(verify(), "decode pods")
    assert check["detail"] == (
        f"{DECODE_POD} Running, 2/3 ready; decode-{NAME}: CrashLoopBackOff (4 restarts)"
    )
    assert "EngineDeadError" in check["cause"]
    assert f"-c decode-{NAME} --previous" in check["fix"]


def test_endpoint_not_ready(fake, verify):
    fake.iecs[(NAMESPACE, NAME)]["status"] = recorded_json("iec-status-in-progress.json")
    result = verify()
    check = failed_only(result, "endpoint ready")
    assert check["detail"].startswith("status DeploymentInProgress, conditions[0]: 'Waiting")
    assert "still loading" in check["cause"]
    assert f"kubectl describe inferenceendpointconfig {NAME} -n {NAMESPACE}" in check["fix"]
    assert result.check("short prompt answered")["detail"] == "not sent: endpoint ready failed"


def test_router_threshold_above_the_long_prompt(fake, verify):
    fake.router_threshold = 100_000  # the router sends everything straight to the decoder
    result = verify()
    assert result.code == 1
    routed = result.check("long prompt -> prefill + decode")
    assert routed["result"] == FAIL and "disaggregate=False" in routed["detail"]
    assert "threshold (100000) is above it" in routed["cause"]
    # The decoder's Retrieved lines from earlier traffic (5 min ago) do not count.
    kv = result.check("KV cache received")
    assert kv["result"] == FAIL and "no KV cache reached the decoder" in kv["cause"]
    assert result.check("KV transfer throughput")["result"] == SKIP


def test_router_threshold_zero_disaggregates_short_prompts(fake, verify):
    fake.router_threshold = 0
    result = verify()
    check = result.check("short prompt -> decoder only")
    assert check["result"] == FAIL and "disaggregate=True" in check["detail"]
    assert check["ref"] == "docs/troubleshooting.md#short-prompt-disaggregated"
    assert result.check("long prompt -> prefill + decode")["result"] == PASS


def test_pd_buffer_full(fake, verify):
    fake.kv_variant = "buffer-full"
    check = failed_only(verify(), "decoder PD buffer")
    assert check["detail"].startswith("2 'Failed to allocate memory object' line(s)")
    assert "16 or 32 GiB" in check["fix"]
    assert check["ref"] == "docs/troubleshooting.md#pd-buffer-full"


def test_prompt_pod_that_never_starts_times_out_and_is_deleted(fake, verify):
    fake.prompt_pod_mode = "stuck"
    result = verify("--timeout", "0.2")
    check = result.check("short prompt answered")
    assert check["result"] == FAIL
    assert "did not finish within 0.2 s" in check["detail"]
    assert "ImagePullBackOff" in check["detail"]
    assert "raise --timeout" in check["fix"]
    assert list(result.results()) == ALL_CHECKS
    assert result.check("KV cache received")["result"] == SKIP
    assert len(fake.created) == 2 and fake.deleted == [p["metadata"]["name"] for p in fake.created]


def test_unknown_model_is_reported_from_the_router_answer(fake, verify):
    result = verify("--model", "llama")
    check = result.check("short prompt answered")
    assert check["result"] == FAIL
    assert check["detail"] == "HTTP 404: The model `llama` does not exist."


def test_text_table_of_a_failing_run(fake, verify):
    fake.kv_variant = "recomputed"
    result = verify(fmt="text")
    assert result.code == 1
    lines = result.out.splitlines()
    assert lines[0] == (
        f"DPD endpoint {NAMESPACE}/{NAME}: routing threshold 4096 "
        "(from the IEC's pdSpec.routingThreshold)"
    )
    assert lines[3].split() == ["CHECK", "RESULT", "DETAIL"]
    row = next(i for i, line in enumerate(lines) if line.startswith("KV cache received"))
    assert lines[row].split()[3] == FAIL
    assert lines[row + 1].strip().startswith("cause: the decoder recomputed the prompt")
    assert lines[row + 2].strip().startswith("fix:   keep PYTHONHASHSEED=0 in the worker env")
    assert lines[row + 3].strip() == "see:   docs/troubleshooting.md#kv-transfer-absent"
    assert lines[-1] == "16 passed, 1 failed, 1 skipped"


def test_recompute_detail_names_a_role_without_the_seed_and_a_second_image(fake, verify):
    """A rollout half done: the decoder runs another image and no PYTHONHASHSEED."""
    fake.kv_variant = "recomputed"
    worker = fake.pod(NAMESPACE, DECODE_POD)["spec"]["containers"][0]
    worker["env"] = [e for e in worker["env"] if e["name"] != "PYTHONHASHSEED"]
    worker["image"] = "lmcache/vllm-openai:v0.4.3"
    result = verify()
    assert [c["name"] for c in result.json["checks"] if c["result"] == FAIL] == [
        "rendered worker env",  # the pods say why before the logs do
        "KV cache received",
    ]
    assert result.check("rendered worker env")["detail"] == f"{DECODE_POD} lacks PYTHONHASHSEED"
    check = result.check("KV cache received")
    assert check["detail"].endswith(
        "PYTHONHASHSEED prefill 0, decode unset; images differ: prefill "
        "public.ecr.aws/deep-learning-containers/vllm:server-hyperpod-cuda-v1.1; "
        "decode lmcache/vllm-openai:v0.4.3"
    )


def test_a_variable_the_operator_dropped_or_rewrote_fails_with_its_cause(fake, verify):
    worker = fake.pod(NAMESPACE, PREFILL_POD)["spec"]["containers"][0]
    worker["env"] = [
        {**e, "value": "1"} if e["name"] == "PD_BUFFER_SIZE" else e
        for e in worker["env"]
        if e["name"] != "LMCACHE_SAVE_DECODE_CACHE"
    ]
    check = verify("--no-prompts").check("rendered worker env")
    assert check["result"] == FAIL
    assert check["detail"] == (
        f"{PREFILL_POD} has PD_BUFFER_SIZE=1 (asked 8589934592); {PREFILL_POD} lacks "
        "LMCACHE_SAVE_DECODE_CACHE"
    )
    assert "#431" in check["cause"]
    assert check["ref"] == "docs/troubleshooting.md#worker-environment-rewritten"


def test_a_decoder_older_than_a_prefiller_restart_fails(fake, verify):
    prefill = fake.pod(NAMESPACE, PREFILL_POD)["status"]["containerStatuses"][0]
    prefill["state"] = {"running": {"startedAt": "2026-11-29T12:10:00Z"}}
    prefill["restartCount"] = 1
    check = verify("--no-prompts").check("decoders newer than prefillers")
    assert check["result"] == FAIL
    assert check["detail"] == (
        f"{DECODE_POD} (started 2026-11-29 11:40:31Z) older than {PREFILL_POD}'s start at "
        "2026-11-29 12:10:00Z"
    )
    assert "rollout restart" in check["fix"]
    assert check["ref"] == "docs/troubleshooting.md#stale-decoder"


def test_router_service_missing_where_the_stack_binds_to_it(fake, verify):
    """The Service the split's TargetGroupBinding and the benchmark Job name
    (core/vocabulary.py RouterService) is not where expected: verify says so, and sends no
    prompt to a URL that reaches nothing."""
    service = fake.services.pop("hyperpod-inference-system")[0]
    fake.services["inference"] = [service]  # somewhere else: the endpoint's own namespace
    result = verify()
    assert result.code == 1
    check = result.check("router service")
    assert check["result"] == FAIL
    assert check["detail"] == (
        "no llama-3-3-70b-inference-routing-service among 0 Services of hyperpod-inference-system"
    )
    assert "do not move traffic weight" in check["fix"]
    assert result.check("short prompt answered")["result"] == SKIP
    assert fake.prompts == []


def test_the_report_says_which_revision_the_endpoint_serves(fake, verify):
    """The live IEC's modelLocation: the staged copy (endpoints.<key>.checkpoint) it loads."""
    location = fake.iecs[(NAMESPACE, NAME)]["spec"]["modelSourceConfig"]["modelLocation"]
    assert location.endswith("/6f6073b423013f6a7d4d9f39144961bfbfbc386b")
    text = verify(fmt="text").out.splitlines()
    assert f"serves: {location}" in text
    assert json.loads(verify(fmt="json").out)["endpoint"]["modelLocation"] == location


def test_workers_the_network_policy_does_not_select_fail_with_its_cause(fake, verify):
    """The operator labels a pool's pods otherwise than the policy selects: the pods are
    unguarded, and only this check says so."""
    fake.pod(NAMESPACE, DECODE_POD)["metadata"]["labels"]["app"] = "llama-decode"
    check = failed_only(verify("--no-prompts"), "workers guarded")
    assert check["detail"].startswith(f"llama-3-3-70b-workers does not select {DECODE_POD} ")
    assert "'app': 'llama-decode'" in check["detail"]
    assert "--show-labels" in check["fix"]
    assert check["ref"] == "docs/troubleshooting.md#workers-unguarded"


def test_a_worker_on_the_host_network_is_beyond_the_policy(fake, verify):
    fake.pod(NAMESPACE, PREFILL_POD)["spec"]["hostNetwork"] = True
    check = failed_only(verify("--no-prompts"), "workers guarded")
    assert check["detail"] == f"{PREFILL_POD} runs on the host network"


def test_workers_that_can_reach_the_instance_metadata_service_fail_with_its_cause(fake, verify):
    """A cluster whose endpoint namespace lacks the metadata egress policy (a stack deployed
    before it, or a policy deleted): the workers can take their node's role."""
    del fake.network_policies[(NAMESPACE, "no-instance-metadata")]
    check = failed_only(verify("--no-prompts", target=("--stack", "dev")), "workers guarded")
    assert check["detail"] == (
        f"{PREFILL_POD}, {DECODE_POD} can reach the instance metadata service (169.254.169.254)"
    )
    assert "no-instance-metadata" in check["fix"] and "pulumi up" in check["fix"]
    assert check["ref"] == "docs/troubleshooting.md#workers-reach-the-instance-metadata-service"


def test_a_policy_that_lets_the_workers_reach_the_metadata_service_again_fails(fake, verify):
    """Another Egress policy selecting the workers that opens 169.254.169.254 (policies add up)."""
    fake.network_policies[(NAMESPACE, "open")] = {
        "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
        "metadata": {"name": "open", "namespace": NAMESPACE},
        "spec": {"podSelector": {}, "policyTypes": ["Egress"],
                 "egress": [{"to": [{"ipBlock": {"cidr": "169.254.0.0/16"}}],
                             "ports": [{"port": 80}]}]},
    }  # fmt: skip
    check = failed_only(verify("--no-prompts"), "workers guarded")
    assert "can reach the instance metadata service" in check["detail"]


def test_a_stack_whose_policy_is_missing_in_the_cluster_fails(fake, verify):
    fake.network_policies.clear()
    check = failed_only(verify("--no-prompts", target=("--stack", "dev")), "workers guarded")
    assert check["detail"] == (
        f"no NetworkPolicy llama-3-3-70b-workers in {NAMESPACE}, though the stack creates one"
    )
    assert "pulumi up" in check["fix"]


def test_without_a_stack_a_missing_policy_is_skipped(fake, verify):
    fake.network_policies.clear()
    result = verify("--no-prompts")
    assert result.code == 0
    assert result.check("workers guarded")["result"] == SKIP
