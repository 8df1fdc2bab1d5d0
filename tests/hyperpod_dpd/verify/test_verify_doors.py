"""`verify --stack` tries the model's other doors without a key (hyperpod_dpd/verify/doors.py):
the router's Service from a pod of a namespace the routers' NetworkPolicy does not admit, on a
GPU node; and the inference operator's own load balancer of the endpoint (its `alb-*` Ingress).
From the same kind of pod it tries the instance metadata service, which the GPU nodes' boot
script closes to pods (hyperpod_dpd/verify/node_metadata.py). The fake cluster applies the dev
stack's rendered routers policy to the prompt pods (tests/workloads/network_paths.py), serves
the operator's load balancer when given one, and refuses GPU nodes' pods the metadata service."""

from __future__ import annotations

import pytest

from core import api_key
from core.vocabulary import BENCHMARK_NAMESPACE, GPU_RESOURCE, ROLE_LABEL, ROUTERS_POLICY
from hyperpod_dpd.verify.doors import OPERATOR_LB, ROUTER_CLOSED, judge_outsider, scheme_of
from hyperpod_dpd.verify.node_metadata import METADATA_CLOSED, METADATA_URL
from hyperpod_dpd.verify.prompts import PromptResult
from hyperpod_dpd.verify.results import FAIL, PASS, SKIP, WARN
from tests.hyperpod_dpd.verify.fake_kube import (
    OPERATOR_LB_URL,
    ROUTER_NS,
    ROUTER_URL,
    operator_ingress,
)

DEV = ("--stack", "dev")
PUBLIC_HOST = "k8s-hyperpod-alb1234-0123456789.us-east-2.elb.amazonaws.com"


def _env(pod) -> dict[str, str]:
    return {e["name"]: e.get("value", "") for e in pod["spec"]["containers"][0]["env"]}


def _pods_to(fake, url: str) -> list[dict]:
    return [p for p in fake.created if _env(p)["URL"] == url]


def _doors(result) -> dict[str, str]:
    doors = (ROUTER_CLOSED, OPERATOR_LB, METADATA_CLOSED)
    return {n: r for n, r in result.results().items() if n in doors}


@pytest.fixture
def with_lb(fake):
    """The endpoint's Ingress as the operator writes it, its internal load balancer provisioned."""
    fake.ingresses[ROUTER_NS] = [operator_ingress()]
    return fake


def test_a_pod_the_routers_policy_does_not_admit_gets_no_answer(fake, verify):
    result = verify(target=DEV)
    assert result.code == 0, result.out
    assert result.check(ROUTER_CLOSED)["result"] == PASS
    assert "Connection timed out" in result.check(ROUTER_CLOSED)["detail"]
    # One pod, in `default`, placed on a GPU node past its taint, with no key.
    (pod,) = [p for p in _pods_to(fake, ROUTER_URL) if p["metadata"]["namespace"] != (
        BENCHMARK_NAMESPACE)]  # fmt: skip
    assert pod["metadata"]["namespace"] == "default"
    assert {"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"} in (
        pod["spec"]["tolerations"])  # fmt: skip
    (term,) = pod["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]  # fmt: skip
    assert term["matchExpressions"][0]["key"] == ROLE_LABEL
    assert api_key.ENV not in _env(pod)
    # No Ingress of the endpoint: nothing to try.
    assert result.check(OPERATOR_LB)["result"] == SKIP


def test_without_the_routers_policy_the_router_answers_an_outsider_and_fails(fake, verify):
    del fake.network_policies[(ROUTER_NS, ROUTERS_POLICY)]
    result = verify(target=DEV)
    assert result.code == 1
    check = result.check(ROUTER_CLOSED)
    assert check["result"] == FAIL
    assert check["detail"].startswith("the router answered a pod of default on a GPU node: ")
    assert "routers-ingress" in check["fix"] and "pulumi up --stack dev" in check["fix"]
    assert check["ref"] == "docs/troubleshooting.md#router-answers-outsiders"


def test_an_internal_operator_load_balancer_that_answers_without_a_key_warns(with_lb, verify):
    """Open inside the VPC and nothing the stack can set closes it: said, cause and fix, but
    not a failure every run of every stack would have."""
    result = verify(target=DEV)
    assert result.code == 0, result.out
    check = result.check(OPERATOR_LB)
    assert check["result"] == WARN and check["fix"]
    assert "answered a prompt without a key" in check["detail"]
    assert check["ref"] == "docs/troubleshooting.md#operator-load-balancer-answers-without-a-key"
    # Sent from the prompts' namespace, without the key its Secret holds there.
    (pod,) = _pods_to(with_lb, OPERATOR_LB_URL)
    assert pod["metadata"]["namespace"] == BENCHMARK_NAMESPACE
    assert api_key.ENV not in _env(pod)


def test_an_operator_load_balancer_that_answers_nothing_without_a_key_passes(with_lb, verify):
    with_lb.operator_lb_open = False
    result = verify(target=DEV)
    assert result.code == 0, result.out
    assert _doors(result) == {ROUTER_CLOSED: PASS, OPERATOR_LB: PASS, METADATA_CLOSED: PASS}


def test_an_internet_facing_operator_load_balancer_fails_untried(fake, verify):
    fake.ingresses[ROUTER_NS] = [operator_ingress(host=PUBLIC_HOST)]
    result = verify(target=DEV)
    check = result.check(OPERATOR_LB)
    assert check["result"] == FAIL and PUBLIC_HOST in check["detail"]
    assert "internet-facing" in check["cause"]
    assert "kubectl delete ingress -n hyperpod-inference-system alb-" in check["fix"]
    assert not [p for p in fake.created if PUBLIC_HOST in _env(p)["URL"]]


def test_without_prompts_only_the_scheme_is_judged(fake, verify):
    fake.ingresses[ROUTER_NS] = [operator_ingress()]
    quiet = verify("--no-prompts", target=DEV)
    assert _doors(quiet) == {ROUTER_CLOSED: SKIP, OPERATOR_LB: SKIP, METADATA_CLOSED: SKIP}
    fake.ingresses[ROUTER_NS] = [operator_ingress(scheme="internet-facing", host=None)]
    public = verify("--no-prompts", target=DEV)
    assert _doors(public) == {ROUTER_CLOSED: SKIP, OPERATOR_LB: FAIL, METADATA_CLOSED: SKIP}
    assert fake.created == []


def test_a_gpu_nodes_pod_refused_the_metadata_service_passes(fake, verify):
    result = verify(target=DEV)
    check = result.check(METADATA_CLOSED)
    assert check["result"] == PASS and "Connection refused" in check["detail"]
    # Tried from `default` (none of the stack's NetworkPolicies), on a GPU node, no key.
    (pod,) = _pods_to(fake, METADATA_URL)
    assert pod["metadata"]["namespace"] == "default"
    assert pod["spec"]["affinity"]["nodeAffinity"]
    assert api_key.ENV not in _env(pod)


def test_a_gpu_node_without_the_boot_scripts_rule_fails(fake, verify):
    fake.gpu_metadata_open = True  # e.g. a node created before the rule came in
    result = verify(target=DEV)
    assert result.code == 1
    check = result.check(METADATA_CLOSED)
    assert check["result"] == FAIL
    assert check["detail"] == (
        "the instance metadata service answered a pod of default on a GPU node: HTTP 401"
    )
    assert "batch-replace-cluster-nodes" in check["fix"]
    assert check["ref"] == "docs/troubleshooting.md#gpu-nodes-answer-the-metadata-service"


def test_the_router_closed_is_a_timeout_and_nothing_else():
    """A policy drops the connection: only curl's timeout shows it closed; a name that does
    not resolve says nothing of the policy."""
    ctx = {"outsider": "default"}
    timed_out = PromptResult(False, None, "curl: (28) Connection timed out", timed_out=True)
    unresolved = PromptResult(False, None, "curl: (6) Could not resolve host: x")
    answered = PromptResult(False, 404, "HTTP 404: The model `x` does not exist.")
    assert judge_outsider(timed_out, ctx).result == PASS
    assert judge_outsider(unresolved, ctx).result == SKIP
    assert judge_outsider(answered, ctx).result == FAIL


def test_the_scheme_is_the_load_balancers_own_address_once_it_has_one():
    # The annotation says internal; the address is an internet-facing load balancer's.
    assert scheme_of(operator_ingress(scheme="internal", host=PUBLIC_HOST)) == "internet-facing"
    assert scheme_of(operator_ingress(scheme="internet-facing", host=None)) == "internet-facing"
    assert scheme_of(operator_ingress()) == "internal"
