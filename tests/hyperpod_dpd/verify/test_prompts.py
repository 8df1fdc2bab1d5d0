"""Prompt sizing, the answer parser, and the one-shot pod's script run for real (sh + curl)."""

from __future__ import annotations

import json
import os
import socket
import subprocess

import pytest

from core import api_key
from hyperpod_dpd.verify import prompts
from hyperpod_dpd.verify.prompts import (
    HttpPromptClient,
    PodPromptClient,
    Prompt,
    long_prompt,
    short_prompt,
)
from tests.hyperpod_dpd.verify.fake_kube import SPLIT_KEY, ChatServer, FakeKube

MODEL = "/opt/ml/model"


def test_short_prompt_is_far_below_any_sane_threshold():
    p = short_prompt(MODEL)
    assert p.content == "What is disaggregated prefill-decode in one sentence?"
    assert p.estimated_tokens < 20  # the docs' router logs estimated_tokens=12 for it


@pytest.mark.parametrize("threshold", [256, 1024, 4096, 8000])
def test_long_prompt_is_threshold_times_1_5_words(threshold):
    p = long_prompt(threshold, MODEL, max_model_len=32768)
    assert p is not None
    assert threshold * 1.5 <= p.words < threshold * 1.5 + 9  # whole sentences of 9 words
    assert p.estimated_tokens >= threshold * 1.5


def test_long_prompt_stays_within_max_model_len():
    p = long_prompt(6000, MODEL, max_model_len=10000)
    assert p is not None
    assert p.words * prompts.TOKENS_PER_WORD_MAX + p.max_tokens < 10000
    assert p.words > 6000 * 1.1


def test_no_long_prompt_when_threshold_is_near_max_model_len():
    assert long_prompt(15000, MODEL, max_model_len=16384) is None


def test_body_parts_splice_into_the_json_body():
    p = long_prompt(4096, MODEL, 16384)
    head, tail = p.body_parts()
    assert json.loads(head + p.content + tail) == p.body()
    assert head + p.content + tail == json.dumps(p.body())


def test_sentence_that_needs_escaping_is_refused():
    with pytest.raises(ValueError, match="needs escaping"):
        Prompt("short", 'say "hi"', 1)


@pytest.mark.parametrize(
    ("status", "body", "ok", "answer"),
    [
        (
            200,
            '{"choices": [{"message": {"content": "Hi"}, "finish_reason": "stop"}]}',
            True,
            "'Hi' (finish_reason stop)",
        ),
        (
            400,
            '{"object": "error", "message": "This model\'s maximum context length is 16384"}',
            False,
            "HTTP 400: This model's maximum context length is 16384",
        ),
        (
            503,
            '{"error": {"message": "no decode endpoint"}}',
            False,
            "HTTP 503: no decode endpoint",
        ),
        (502, "<html>Bad Gateway</html>", False, "HTTP 502: <html>Bad Gateway</html>"),
    ],
)
def test_interpret(status, body, ok, answer):
    result = prompts.interpret(status, body)
    assert (result.ok, result.answer) == (ok, answer)


def test_pod_log_without_an_http_answer():
    log = "curl: (6) Could not resolve host: x.svc.cluster.local\n\n__HTTP_STATUS__=000\n"
    result = prompts._pod_result("Failed", log)
    assert not result.ok
    assert result.answer == (
        "curl got no HTTP answer (pod Failed): curl: (6) Could not resolve host: "
        "x.svc.cluster.local"
    )


def test_http_client_reports_an_unreachable_url():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = HttpPromptClient(f"http://127.0.0.1:{port}/v1/chat/completions", timeout=2)
    result = client.send(short_prompt(MODEL))
    assert not result.ok and result.status is None
    assert result.answer.startswith(f"cannot reach http://127.0.0.1:{port}/v1/chat/completions")


@pytest.mark.parametrize("kind", ["short", "long"])
def test_the_pod_script_sends_the_prompt_for_real(kind):
    """The container's command and env, run by a local sh with the local curl against the fake
    router: the body it sends is exactly the prompt, and its output parses as the pod log.
    (`make test` checks that sh and curl are installed before it starts; never skipped.)"""
    fake = FakeKube()
    with ChatServer(fake).serving() as chat:
        client = PodPromptClient(None, "inference", chat.url, timeout=10, poll_interval=0.01)  # type: ignore[arg-type]
        prompt = short_prompt(MODEL) if kind == "short" else long_prompt(4096, MODEL, 16384)
        container = client.pod_manifest(prompt, "dpd-verify-test")["spec"]["containers"][0]
        env = {e["name"]: e["value"] for e in container["env"]}
        done = subprocess.run(
            container["command"],
            env={"PATH": os.environ["PATH"], **env},
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    assert fake.prompts == [prompt.content]
    result = prompts._pod_result("Succeeded", done.stdout)
    assert result.ok and result.status == 200


@pytest.mark.parametrize("with_key", [True, False])
def test_the_pod_script_presents_the_key_it_is_given_for_real(with_key):
    """The keyed pod's script, run by a local sh and curl against the split's listener: with
    the key in its environment (as the kubelet puts the Secret's there) it is answered, without
    it refused with 401."""
    fake = FakeKube()
    with ChatServer(fake, split=True).serving() as split:
        client = PodPromptClient(None, "inference", split.url, timeout=10, poll_interval=0.01,  # type: ignore[arg-type]
                                 keyed=with_key)  # fmt: skip
        container = client.pod_manifest(short_prompt(MODEL), "dpd-verify-key")["spec"][
            "containers"][0]  # fmt: skip
        env = {e["name"]: e["value"] for e in container["env"] if "value" in e}
        if with_key:
            env[api_key.ENV] = SPLIT_KEY
        done = subprocess.run(container["command"], env={"PATH": os.environ["PATH"], **env},
                              capture_output=True, text=True, timeout=30, check=False)  # fmt: skip
    result = prompts._pod_result("Succeeded", done.stdout)
    assert (result.ok, result.status) == ((True, 200) if with_key else (False, 401))
    assert SPLIT_KEY not in json.dumps(container)
