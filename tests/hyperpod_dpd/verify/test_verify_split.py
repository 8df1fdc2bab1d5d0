"""`verify` of an endpoint behind the stack's traffic split: a prompt to the split without the API
key must get 401 and one with it an answer, from the cluster (one-shot pods, the key from the
stack's Secret, never in a pod spec) or from this machine (--router-url: the key from
HYPERPOD_DPD_API_KEY). The canary's baseline is behind the split; the fake serves it."""

from __future__ import annotations

import copy
import json

import pytest

from core import api_key
from core.vocabulary import BENCHMARK_NAMESPACE
from hyperpod_dpd.verify.results import FAIL, PASS, SKIP
from tests.hyperpod_dpd.verify.fake_kube import NAME, NAMESPACE, SPLIT_KEY, SPLIT_URL, ChatServer

SPLIT = ["split refuses no key", "split answers the key"]
BASELINE = ("--stack", "canary", "--endpoint", "baseline")


@pytest.fixture
def baseline(fake):
    """The canary's colocated baseline and its router's Service, as the operator makes them."""
    iec = copy.deepcopy(fake.iecs[(NAMESPACE, NAME)])
    iec["metadata"]["name"] = "baseline"
    iec["spec"].pop("pdSpec")
    fake.iecs[(NAMESPACE, "baseline")] = iec
    fake.services["hyperpod-inference-system"].append({"metadata": {
        "name": "baseline-inference-routing-service", "namespace": "hyperpod-inference-system"}})  # fmt: skip
    return fake


def _url(pod) -> str:
    (url,) = [e["value"] for e in pod["spec"]["containers"][0]["env"] if e["name"] == "URL"]
    return url


def _split(result) -> dict[str, str]:
    return {n: r for n, r in result.results().items() if n in SPLIT}


def test_the_split_refuses_no_key_and_answers_the_stacks_key_from_its_secret(baseline, verify):
    result = verify(target=BASELINE)
    assert result.code == 0, result.out
    assert _split(result) == {n: PASS for n in SPLIT}
    assert result.check("split refuses no key")["detail"] == "401 without Authorization"
    # Two pods at the split's name; the second takes the key from the Secret, by reference.
    unkeyed, keyed = [p for p in baseline.created if _url(p) == SPLIT_URL]
    for pod in (unkeyed, keyed):
        env = pod["spec"]["containers"][0]["env"]
        assert {"name": "URL", "value": SPLIT_URL} in env
    assert api_key.ENV not in {e["name"] for e in unkeyed["spec"]["containers"][0]["env"]}
    (ref,) = [e for e in keyed["spec"]["containers"][0]["env"] if e["name"] == api_key.ENV]
    assert ref == {"name": api_key.ENV, "valueFrom": {"secretKeyRef": {
        "name": api_key.SECRET_NAME, "key": api_key.SECRET_KEY}}}  # fmt: skip
    assert SPLIT_KEY not in json.dumps(baseline.created) and SPLIT_KEY not in result.out


def test_a_split_that_forwards_without_a_key_fails(baseline, verify):
    baseline.split_open = True
    result = verify(target=BASELINE)
    assert result.code == 1 and _split(result) == {SPLIT[0]: FAIL, SPLIT[1]: PASS}
    check = result.check(SPLIT[0])
    assert check["detail"].startswith("answered without a key: ")
    assert "pulumi up --stack canary" in check["fix"]
    assert check["ref"] == "docs/troubleshooting.md#split-takes-no-key-or-refuses-the-key"


def test_a_stale_key_in_the_secret_fails_naming_where_it_came_from(baseline, verify):
    baseline.split_key = "another" + SPLIT_KEY[7:]  # rotated, the Secret not rewritten
    result = verify(target=BASELINE)
    assert result.code == 1 and _split(result) == {SPLIT[0]: PASS, SPLIT[1]: FAIL}
    check = result.check(SPLIT[1])
    assert "HTTP 401: missing or unknown API key" in check["detail"]
    assert f"Secret {BENCHMARK_NAMESPACE}/{api_key.SECRET_NAME}" in check["cause"]


def test_without_the_secret_the_keyed_pod_cannot_start_and_the_check_says_so(baseline, verify):
    baseline.secrets.clear()
    result = verify("--timeout", "0.5", target=BASELINE)
    check = result.check(SPLIT[1])
    assert check["result"] == FAIL
    assert f'CreateContainerConfigError: secret "{api_key.SECRET_NAME}" not found' in (
        check["detail"])  # fmt: skip


def test_from_this_machine_the_key_comes_from_the_environment(baseline, verify, monkeypatch):
    with ChatServer(baseline, split=True).serving() as split:
        monkeypatch.setenv(api_key.ENV, SPLIT_KEY)
        keyed = verify("--router-url", "http://127.0.0.1:9/unused", "--traffic-url", split.url,
                       target=BASELINE)  # fmt: skip
        monkeypatch.delenv(api_key.ENV)
        monkeypatch.setenv("PATH", "/nonexistent")  # no pulumi to ask for the stack's output
        unkeyed = verify("--router-url", "http://127.0.0.1:9/unused", "--traffic-url",
                         split.url, target=BASELINE)  # fmt: skip
    assert keyed.code == 0 and _split(keyed) == {n: PASS for n in SPLIT}
    assert baseline.created == []  # no pod: both from here
    assert _split(unkeyed) == {SPLIT[0]: PASS, SPLIT[1]: SKIP}
    detail = unkeyed.check(SPLIT[1])["detail"]
    assert detail.startswith(f"no key: {api_key.ENV} is not set")
    assert f"export {api_key.ENV}=$(pulumi stack output trafficApiKey --show-secrets " in detail


def test_an_endpoint_no_split_fronts_gets_no_split_check(fake, verify):
    result = verify(target=("--stack", "dev"), fmt="json")
    assert not _split(result)
