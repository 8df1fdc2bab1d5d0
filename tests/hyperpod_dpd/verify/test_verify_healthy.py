"""`hyperpod-dpd verify` end to end against the recorded healthy deployment (the real
`kubernetes` client and a local fake API server): every check passes with one-shot prompt
pods or through --router-url, the endpoint is read from a stack or given by name with an
explicit threshold, and --no-prompts only reads."""

from __future__ import annotations

import copy
import json

from hyperpod_dpd.verify.prompts import SHORT_SENTENCE
from hyperpod_dpd.verify.results import FAIL, PASS, SKIP
from tests.hyperpod_dpd.verify.conftest import ALL_CHECKS, PROMPT_CHECKS
from tests.hyperpod_dpd.verify.fake_kube import NAME, NAMESPACE, PREFILL_POD, ChatServer


def test_healthy_deployment_passes_every_check_with_a_prompt_pod(fake, verify):
    result = verify()
    assert result.code == 0, result.out
    assert list(result.results()) == ALL_CHECKS  # in the documented order
    assert result.results() == dict.fromkeys(ALL_CHECKS, PASS)
    report = result.json
    assert report["endpoint"]["routingThreshold"] == 4096
    assert "IEC" in report["endpoint"]["thresholdSource"]
    # Only this endpoint's pods count (a mistral-7b prefill pod is Pending in the namespace).
    assert "mistral" not in json.dumps(report["checks"])
    assert PREFILL_POD in result.check("prefill pods")["detail"]
    assert "PrefixAwareRouter selected" in result.check("long prompt -> prefill + decode")["detail"]
    assert "176.1686" not in result.check("KV transfer throughput")["detail"]  # slowest rank
    assert "GB/s" in result.check("KV transfer throughput")["detail"]
    # Two one-shot pods, through the router service, both deleted again.
    assert [p["metadata"]["labels"]["hyperpod-dpd/prompt"] for p in fake.created] == [
        "short",
        "long",
    ]
    assert fake.deleted == [p["metadata"]["name"] for p in fake.created]
    assert not any(p["metadata"]["name"].startswith("dpd-verify") for p in fake.pods[NAMESPACE])
    short, long = fake.prompts
    assert short == SHORT_SENTENCE
    assert len(long) // 4 >= 1.5 * 4096  # well above the threshold by the router's estimate
    assert len(long.split()) >= 1.5 * 4096


def test_healthy_deployment_through_a_router_url(fake, verify):
    with ChatServer(fake).serving() as chat:
        result = verify("--router-url", chat.url)
    assert result.code == 0, result.out
    assert result.results() == dict.fromkeys(ALL_CHECKS, PASS)
    assert result.json["prompts"] == f"HTTP to {chat.url}"
    assert fake.created == []
    assert len(fake.prompts) == 2


def test_stack_mode_reads_name_namespace_and_threshold_from_the_dev_stack(fake, verify):
    result = verify(target=("--stack", "dev"))
    assert result.code == 0, result.out
    assert result.json["endpoint"] == {
        "name": "llama-3-3-70b",
        "namespace": "inference",
        "routingThreshold": 4096,
        "thresholdSource": "the IEC's pdSpec.routingThreshold",
        # the dev stack's staged copy: the revision it serves
        "modelLocation": "models/meta-llama/Llama-3.3-70B-Instruct/"
        "6f6073b423013f6a7d4d9f39144961bfbfbc386b",
    }


def test_explicit_threshold_is_compared_with_the_router_log(fake, verify):
    result = verify("--routing-threshold", "5000")
    assert result.json["endpoint"]["thresholdSource"] == "--routing-threshold"
    assert "(expected threshold 5000)" in result.check("short prompt -> decoder only")["detail"]


def test_no_prompts_is_read_only(fake, verify):
    result = verify("--no-prompts")
    assert result.code == 0
    assert [n for n, r in result.results().items() if r == SKIP] == PROMPT_CHECKS
    assert fake.created == [] and fake.prompts == []
    assert all(method == "GET" for method, _ in fake.requests)


# Behind the canary's split, checked by prompts, which --no-prompts leaves out; the model's
# other doors, tried by prompts (the operator's Ingress is not recorded); the nodes' boot, with
# no AWS answers here.
SKIPPED_WITHOUT_PROMPTS = {
    "split refuses no key": SKIP,
    "split answers the key": SKIP,
    "router refuses outsiders": SKIP,
    "operator load balancer": SKIP,
    "metadata closed on GPU nodes": SKIP,
    "boot script unchanged": SKIP,
    "boot script not rewritten": SKIP,
    "lifecycle config unchanged": SKIP,
}


def test_a_colocated_endpoint_of_the_stack_gets_its_router_service_checked(fake, verify):
    """The canary's baseline is colocated: the DPD checks do not apply, but the split binds to
    its router's Service all the same, so that Service is checked, and the copy it loads, and
    (a stack's checks) what the nodes boot with, skipped where no `pulumi` answers; nothing
    else is."""
    iec = copy.deepcopy(fake.iecs[(NAMESPACE, NAME)])
    iec["metadata"]["name"] = "baseline"
    iec["spec"].pop("pdSpec")
    fake.iecs[(NAMESPACE, "baseline")] = iec
    service = {"metadata": {"name": "baseline-inference-routing-service",
                            "namespace": "hyperpod-inference-system"}}  # fmt: skip
    target = ("--stack", "canary", "--endpoint", "baseline", "--no-prompts")
    missing = verify(target=target)
    assert missing.code == 1 and missing.results() == {
        "serves the staged copy": PASS,
        "router service": FAIL,
        **SKIPPED_WITHOUT_PROMPTS,
    }
    fake.services["hyperpod-inference-system"].append(service)
    found = verify(target=target)
    assert found.code == 0 and found.results() == {
        "serves the staged copy": PASS,
        "router service": PASS,
        **SKIPPED_WITHOUT_PROMPTS,
    }
    assert found.check("router service")["detail"] == (
        "hyperpod-inference-system/baseline-inference-routing-service"
    )
    assert fake.created == []  # no prompt pod
