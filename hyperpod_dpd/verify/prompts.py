"""Prompts for the router, and the two ways to send them (the `PromptClient` seam).

- `PodPromptClient`: what the docs do with `kubectl run curl-... --image=curlimages/curl`: a
  one-shot pod in the cluster POSTs to the router service, the client waits for it to finish,
  reads its log (the answer and the HTTP status) and deletes it.
- `HttpPromptClient`: a direct POST to a URL, e.g. after
  `kubectl port-forward -n hyperpod-inference-system svc/<name>-<ns>-routing-service 8443:443`.

Either may present the traffic split's API key (`Authorization: Bearer <key>`, core/api_key.py):
the HTTP client a key it is given, the pod the key of the stack's Secret in its namespace, as an
environment variable the kubelet fills (never a value in the pod spec).

A prompt is a sentence repeated `repeat` times. The pod builds the text with a shell loop, as the
docs' long-prompt example does, so a prompt of any length fits in the pod spec (a literal prompt of
tens of thousands of words would hit the kernel's 128 KiB limit on one exec argument).
"""

from __future__ import annotations

import json
import math
import secrets
import ssl
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, Protocol

from core import api_key
from core.versions import VERIFY_CURL_IMAGE as DEFAULT_CURL_IMAGE
from hyperpod_dpd.shared.kube import Cluster, ClusterError

SHORT_SENTENCE = "What is disaggregated prefill-decode in one sentence?"
LONG_SENTENCE = "The quick brown fox jumps over the lazy dog. "
LONG_SENTENCE_WORDS = 9
# The router estimates ~4 characters per token (the docs' 600 x 45-character sentence logs
# estimated_tokens=6750); the Llama tokenizer makes ~1.1 tokens of a word of this sentence.
CHARS_PER_TOKEN = 4
TOKENS_PER_WORD_MAX = 1.25  # upper bound for this sentence, used against --max-model-len
LONG_FACTOR = 1.5  # the long prompt has threshold x 1.5 words
MAX_TOKENS = 32
STATUS_MARK = "__HTTP_STATUS__="
# What curl -sS prints when --max-time runs out, connecting or waiting: its exit code 28,
# "Operation timeout" (curl's man page, EXIT CODES). A NetworkPolicy that drops a connection
# leaves the client exactly that.
CURL_TIMEOUT = "curl: (28)"


@dataclass(frozen=True)
class Prompt:
    kind: str  # short | long
    sentence: str
    repeat: int
    model: str = "/opt/ml/model"
    max_tokens: int = MAX_TOKENS

    def __post_init__(self) -> None:
        # The pod splices the sentence into JSON text as-is: it must need no escaping.
        if json.dumps(self.sentence) != f'"{self.sentence}"' or "'" in self.sentence:
            raise ValueError(f"sentence needs escaping: {self.sentence!r}")

    @property
    def content(self) -> str:
        return self.sentence * self.repeat

    @property
    def words(self) -> int:
        return len(self.content.split())

    @property
    def estimated_tokens(self) -> int:
        """The router's estimate (characters / 4), what its 'Conditional routing' line logs."""
        return max(1, len(self.content) // CHARS_PER_TOKEN)

    def body(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "messages": [{"role": "user", "content": self.content}],
            "max_tokens": self.max_tokens,
            "temperature": 0.0,
        }

    def body_parts(self) -> tuple[str, str]:
        """The JSON body split around the content: head + content + tail == json.dumps(body)."""
        mark = "@@CONTENT@@"
        text = json.dumps({**self.body(), "messages": [{"role": "user", "content": mark}]})
        head, tail = text.split(mark)
        return head, tail


def short_prompt(model: str) -> Prompt:
    return Prompt("short", SHORT_SENTENCE, 1, model)


def long_prompt(threshold: int, model: str, max_model_len: int | None) -> Prompt | None:
    """threshold x 1.5 words (at least 1.5 x the threshold in tokens), within max-model-len.
    None when no prompt fits well above the threshold (threshold too close to max-model-len)."""
    words = math.ceil(max(threshold, 1) * LONG_FACTOR)
    if max_model_len:
        room = max_model_len - MAX_TOKENS - 64  # chat template and special tokens
        words = min(words, math.floor(room / TOKENS_PER_WORD_MAX))
    repeat = math.ceil(words / LONG_SENTENCE_WORDS)
    prompt = Prompt("long", LONG_SENTENCE, repeat, model)
    # "Well above": by the router's estimate and by word count (a lower bound of tokens).
    if prompt.words < threshold * 1.1 or prompt.estimated_tokens < threshold * 1.2:
        return None
    return prompt


@dataclass(frozen=True)
class PromptResult:
    ok: bool
    status: int | None  # HTTP status, None: no HTTP answer
    answer: str  # the completion text when ok, else the error the client saw
    timed_out: bool = False
    # False: the request was never sent (the prompt pod could not be created or did not run to
    # its end), so "no HTTP answer" says nothing of the other end.
    sent: bool = True

    @property
    def summary(self) -> str:
        """One line: an answer cut to 80 characters; an error in full (its sources bound it)."""
        text = " ".join(self.answer.split())
        return text[:77] + "..." if self.ok and len(text) > 80 else text


def interpret(status: int | None, body: str) -> PromptResult:
    """An OpenAI-style chat completion answer -> result."""
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if status == 200 and isinstance(data, dict) and data.get("choices"):
        choice = data["choices"][0] or {}
        message = choice.get("message") or {}
        text = str(message.get("content") or choice.get("text") or "")
        return PromptResult(True, status, f"{text!r} (finish_reason {choice.get('finish_reason')})")
    if isinstance(data, dict) and (data.get("message") or data.get("error")):
        error = data.get("message") or data.get("error")
        if isinstance(error, dict):
            error = error.get("message", error)
        return PromptResult(False, status, f"HTTP {status}: {error}")
    shown = " ".join(body.split())[:300] or "empty answer"
    return PromptResult(False, status, f"HTTP {status}: {shown}" if status else shown)


class PromptClient(Protocol):
    """Sends one chat completion to the router; never raises for an unhealthy endpoint."""

    description: str
    warnings: list[str]  # what the user should know that is not a check (e.g. a leftover pod)

    def send(self, prompt: Prompt) -> PromptResult: ...


class HttpPromptClient:
    def __init__(self, url: str, timeout: float, insecure: bool = False, key: str | None = None):
        self.url = url
        self.timeout = timeout
        self._key = key
        self.description = f"HTTP to {url}" + (" with the API key" if key else "")
        self.warnings: list[str] = []
        self._context: ssl.SSLContext | None = None
        if insecure:  # like the docs' `curl -k`: the router's certificate is self-signed
            self._context = ssl.create_default_context()
            self._context.check_hostname = False
            self._context.verify_mode = ssl.CERT_NONE

    def send(self, prompt: Prompt) -> PromptResult:
        request = urllib.request.Request(
            self.url,
            data=json.dumps(prompt.body()).encode(),
            headers={"Content-Type": "application/json", **api_key.headers(self._key)},
            method="POST",
        )
        try:
            with urllib.request.urlopen(
                request, timeout=self.timeout, context=self._context
            ) as response:
                return interpret(response.status, response.read().decode("utf-8", "replace"))
        except urllib.error.HTTPError as exc:
            return interpret(exc.code, exc.read().decode("utf-8", "replace"))
        except TimeoutError:
            return PromptResult(False, None, f"no answer within {self.timeout:g} s", True)
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, TimeoutError):
                return PromptResult(False, None, f"no answer within {self.timeout:g} s", True)
            return PromptResult(False, None, f"cannot reach {self.url}: {reason}")


# The pod's script: build the content with a loop (as the docs do), POST it from stdin, print the
# answer and then the HTTP status on a line of its own. printf is a shell builtin: no exec limit.
# With the API key in its environment, the request presents it (as curl's own argument, in the
# pod alone: never in the pod spec).
POD_SCRIPT = (
    'P=""; i=0; while [ "$i" -lt "$REPEAT" ]; do P="$P$SENTENCE"; i=$((i+1)); done; '
    f'set --; if [ -n "${{{api_key.ENV}:-}}" ]; then '
    f'set -- -H "{api_key.HEADER}: {api_key.SCHEME} ${api_key.ENV}"; fi; '
    'printf "%s%s%s" "$HEAD" "$P" "$TAIL" | '
    'curl -sS -k --max-time "$MAX_TIME" -X POST "$URL" -H "Content-Type: application/json" '
    f'"$@" --data-binary @- -w "\\n{STATUS_MARK}%{{http_code}}\\n"'
)
# The key of the stack's Secret (specs/traffic/keys.py), filled in by the kubelet. Not optional: a
# namespace without it fails the pod ("secret not found"), which the check then reports.
KEY_FROM_SECRET = {
    "name": api_key.ENV,
    "valueFrom": {"secretKeyRef": {"name": api_key.SECRET_NAME, "key": api_key.SECRET_KEY}},
}
POD_LABELS = {
    "app.kubernetes.io/name": "hyperpod-dpd-verify",
    "app.kubernetes.io/managed-by": "hyperpod-dpd",
}


class PodPromptClient:
    def __init__(
        self,
        cluster: Cluster,
        namespace: str,
        url: str,
        timeout: float,
        poll_interval: float,
        image: str = DEFAULT_CURL_IMAGE,
        keyed: bool = False,
        placement: dict[str, Any] | None = None,
        curl_timeout: float | None = None,
    ):
        self.cluster = cluster
        self.namespace = namespace
        self.url = url
        self.timeout = timeout
        self.poll_interval = poll_interval
        self.image = image
        self.keyed = keyed  # present the key of the stack's Secret in `namespace`
        # Where the pod may run (tolerations, affinity: pod spec fields), and how long curl
        # waits for an answer when that is shorter than the wait for the pod itself.
        self.placement = placement or {}
        self.curl_timeout = curl_timeout
        with_key = f" with the API key of Secret {api_key.SECRET_NAME}" if keyed else ""
        self.description = f"one-shot pod ({image}) in {namespace} -> {url}{with_key}"
        self.warnings: list[str] = []

    def pod_manifest(self, prompt: Prompt, name: str) -> dict[str, Any]:
        head, tail = prompt.body_parts()
        env = {
            "URL": self.url,
            "HEAD": head,
            "TAIL": tail,
            "SENTENCE": prompt.sentence,
            "REPEAT": str(prompt.repeat),
            "MAX_TIME": str(max(1, math.ceil(self.curl_timeout or self.timeout))),
        }
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": self.namespace,
                "labels": {**POD_LABELS, "hyperpod-dpd/prompt": prompt.kind},
            },
            "spec": {
                "restartPolicy": "Never",
                # Backstop if verify dies before it deletes the pod.
                "activeDeadlineSeconds": math.ceil(self.timeout) + 60,
                "automountServiceAccountToken": False,
                **self.placement,
                "securityContext": {
                    "runAsNonRoot": True,
                    "runAsUser": 100,  # curl_user of curlimages/curl (a name, not a number)
                    "seccompProfile": {"type": "RuntimeDefault"},
                },
                "containers": [
                    {
                        "name": "curl",
                        "image": self.image,
                        "command": ["sh", "-c", POD_SCRIPT],
                        "env": [
                            *({"name": k, "value": v} for k, v in env.items()),
                            *([KEY_FROM_SECRET] if self.keyed else []),
                        ],
                        "resources": {
                            "requests": {"cpu": "10m", "memory": "32Mi"},
                            "limits": {"memory": "128Mi"},
                        },
                        "securityContext": {
                            "allowPrivilegeEscalation": False,
                            "capabilities": {"drop": ["ALL"]},
                        },
                    }
                ],
            },
        }

    def send(self, prompt: Prompt) -> PromptResult:
        name = f"dpd-verify-{prompt.kind}-{secrets.token_hex(3)}"
        try:
            self.cluster.create_pod(self.namespace, self.pod_manifest(prompt, name))
        except ClusterError as exc:
            return PromptResult(False, None, f"cannot create the prompt pod: {exc}", sent=False)
        try:
            return self._await(name)
        except ClusterError as exc:
            return PromptResult(False, None, f"prompt pod {name}: {exc}", sent=False)
        finally:
            try:
                self.cluster.delete_pod(self.namespace, name)
            except ClusterError as exc:
                # activeDeadlineSeconds stops it; the object stays until someone deletes it.
                self.warnings.append(f"could not delete prompt pod {self.namespace}/{name}: {exc}")

    def _await(self, name: str) -> PromptResult:
        deadline = time.monotonic() + self.timeout
        max_polls = math.ceil(self.timeout / max(self.poll_interval, 0.001)) + 2
        pod: dict[str, Any] = {}
        for _ in range(max_polls):
            pod = self.cluster.read_pod(self.namespace, name)
            phase = (pod.get("status") or {}).get("phase")
            if phase in ("Succeeded", "Failed"):
                log = self.cluster.read_log(self.namespace, name, "curl")
                return _pod_result(phase, log)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            time.sleep(min(self.poll_interval, remaining))
        state = _pod_state_text(pod)
        return PromptResult(
            False,
            None,
            f"prompt pod {name} did not finish within {self.timeout:g} s ({state})",
            True,
            sent=False,
        )


def _pod_result(phase: str, log: str) -> PromptResult:
    body, status = log, None
    head, mark, rest = log.rpartition(STATUS_MARK)
    if mark:
        body = head
        code = rest.strip().split()[0] if rest.strip() else ""
        status = int(code) if code.isdigit() and code != "000" else None
    if status is None:
        shown = " ".join(body.split())[:300] or "no output"
        text = f"curl got no HTTP answer (pod {phase}): {shown}"
        return PromptResult(False, None, text, timed_out=CURL_TIMEOUT in body)
    return interpret(status, body)


def _pod_state_text(pod: dict[str, Any]) -> str:
    status = pod.get("status") or {}
    parts = [f"phase {status.get('phase', 'unknown')}"]
    for cs in status.get("containerStatuses") or []:
        waiting = (cs.get("state") or {}).get("waiting") or {}
        if waiting.get("reason"):
            parts.append(f"{waiting['reason']}: {waiting.get('message', '')}".rstrip(": "))
    for cond in status.get("conditions") or []:
        if cond.get("type") == "PodScheduled" and cond.get("status") == "False":
            parts.append(f"unschedulable: {cond.get('message', '')}")
    return "; ".join(parts)
