"""The Kubernetes API side of the fake cluster (tests/hyperpod_dpd/verify/fake_kube.py): the
paths `verify` calls (an InferenceEndpointConfig, a namespace's Services and Ingresses, its pods by label selector, one pod
to read, create or delete, a container's log with sinceSeconds, tailLines and limitBytes),
answered from `FakeKube`'s state with the API server's Status objects and codes, a kubeconfig
that reaches it with a bearer token, and the HTTP server on 127.0.0.1 (a free port, from a
thread) that serves it and `ChatServer`."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit

from tests.support.quiet_http import QuietHTTPServer

TOKEN = "fake-token-for-tests"
IEC_PATH = re.compile(
    r"^/apis/inference\.sagemaker\.aws\.amazon\.com/v1/namespaces/([^/]+)/"
    r"inferenceendpointconfigs/([^/]+)$"
)
PODS_PATH = re.compile(r"^/api/v1/namespaces/([^/]+)/pods$")
POD_PATH = re.compile(r"^/api/v1/namespaces/([^/]+)/pods/([^/]+)$")
LOG_PATH = re.compile(r"^/api/v1/namespaces/([^/]+)/pods/([^/]+)/log$")
SERVICES_PATH = re.compile(r"^/api/v1/namespaces/([^/]+)/services$")
NETWORK_POLICIES_PATH = re.compile(
    r"^/apis/networking\.k8s\.io/v1/namespaces/([^/]+)/networkpolicies$"
)
INGRESSES_PATH = re.compile(r"^/apis/networking\.k8s\.io/v1/namespaces/([^/]+)/ingresses$")
NETWORK_POLICY_PATH = re.compile(
    r"^/apis/networking\.k8s\.io/v1/namespaces/([^/]+)/networkpolicies/([^/]+)$"
)


def status(code: int, reason: str, message: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


class KubeApi:
    """The API paths over the state of `FakeKube`, which mixes this in: its IECs, pods,
    NetworkPolicies and logs under its lock, the prompt pods it creates and advances on each read, and the
    requests it records."""

    def handle(self, method: str, path: str, query: dict[str, list[str]], body: bytes | None):
        self.requests.append((method, path))
        q = {k: v[0] for k, v in query.items()}
        if m := IEC_PATH.match(path):
            iec = self.iecs.get((m[1], m[2]))
            if method == "GET" and iec:
                return 200, iec
            return 404, status(
                404,
                "NotFound",
                f'inferenceendpointconfigs.inference.sagemaker.aws.amazon.com "{m[2]}" not found',
            )
        if m := PODS_PATH.match(path):
            if method == "POST":
                return self.create_pod(m[1], json.loads(body or b"{}"))
            items = [p for p in self.pods.get(m[1], []) if _selected(p, q.get("labelSelector"))]
            return 200, {"apiVersion": "v1", "kind": "PodList", "metadata": {}, "items": items}
        if m := SERVICES_PATH.match(path):
            items = self.services.get(m[1], [])
            return 200, {"apiVersion": "v1", "kind": "ServiceList", "metadata": {}, "items": items}
        if m := NETWORK_POLICIES_PATH.match(path):
            items = [v for (ns, _), v in self.network_policies.items() if ns == m[1]]
            return 200, {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicyList",
                         "metadata": {}, "items": items}  # fmt: skip
        if m := INGRESSES_PATH.match(path):
            items = self.ingresses.get(m[1], [])
            return 200, {"apiVersion": "networking.k8s.io/v1", "kind": "IngressList",
                         "metadata": {}, "items": items}  # fmt: skip
        if m := NETWORK_POLICY_PATH.match(path):
            if policy := self.network_policies.get((m[1], m[2])):
                return 200, policy
            return 404, status(
                404, "NotFound", f'networkpolicies.networking.k8s.io "{m[2]}" not found'
            )
        if m := LOG_PATH.match(path):
            return self.read_log(m[1], m[2], q)
        if m := POD_PATH.match(path):
            with self.lock:
                pods = self.pods.get(m[1], [])
                pod = next((p for p in pods if p["metadata"]["name"] == m[2]), None)
                if pod is None:
                    return 404, status(404, "NotFound", f'pods "{m[2]}" not found')
                if method == "DELETE":
                    pods.remove(pod)
                    self.deleted.append(m[2])
                    return 200, pod
                if m[2] in {c["metadata"]["name"] for c in self.created}:
                    self.advance_prompt_pod(pod)
                return 200, pod
        return 404, status(
            404, "NotFound", f"the server could not find the requested resource {path}"
        )

    def read_log(self, namespace: str, name: str, q: dict[str, str]):
        pods = self.pods.get(namespace, [])
        pod = next((p for p in pods if p["metadata"]["name"] == name), None)
        if pod is None:
            return 404, status(404, "NotFound", f'pods "{name}" not found')
        names = [c["name"] for c in pod["spec"]["containers"]]
        container = q.get("container")
        if container is None and len(names) > 1:
            return 400, status(
                400,
                "BadRequest",
                f"a container name must be specified for pod {name}, choose one of: {names}",
            )
        container = container or names[0]
        if container not in names:
            return 400, status(
                400, "BadRequest", f"container {container} is not valid for pod {name}"
            )
        if pod["status"].get("phase") == "Pending":
            return 400, status(
                400,
                "BadRequest",
                f'container "{container}" in pod "{name}" is waiting to start: ContainerCreating',
            )
        entries = self.logs.get((namespace, name, container), [])
        if "sinceSeconds" in q:
            since = time.time() - int(q["sinceSeconds"])
            entries = [(t, line) for t, line in entries if t >= since]
        if "tailLines" in q:
            entries = entries[-int(q["tailLines"]) :]
        text = "".join(line + "\n" for _, line in entries)
        if "limitBytes" in q:
            text = text.encode()[: int(q["limitBytes"])].decode(errors="ignore")
        return 200, text

    def kubeconfig(self, directory: Path) -> Path:
        assert self.server is not None
        host, port = self.server.server_address[:2]
        path = directory / "kubeconfig"
        path.write_text(
            "apiVersion: v1\nkind: Config\n"
            f"clusters:\n- name: fake\n  cluster:\n    server: http://{host}:{port}\n"
            "    insecure-skip-tls-verify: true\n"
            f"users:\n- name: tester\n  user:\n    token: {TOKEN}\n"
            "contexts:\n- name: fake\n  context:\n    cluster: fake\n    user: tester\n"
            "current-context: fake\n"
        )
        return path

    @contextmanager
    def serving(self) -> Iterator[Self]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self, method: str) -> None:
                if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                    return self._send(401, status(401, "Unauthorized", "Unauthorized"))
                url = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                code, payload = fake.handle(method, url.path, parse_qs(url.query), body)
                self._send(code, payload)

            def _send(self, code: int, payload: Any) -> None:
                text = payload if isinstance(payload, str) else json.dumps(payload)
                data = text.encode()
                self.send_response(code)
                ctype = "text/plain" if isinstance(payload, str) else "application/json"
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._serve("GET")

            def do_POST(self) -> None:
                self._serve("POST")

            def do_DELETE(self) -> None:
                self._serve("DELETE")

            def log_message(self, *args: Any) -> None:
                pass

        with serve_http(Handler) as server:
            self.server = server
            yield self


@contextmanager
def serve_http(handler: type[BaseHTTPRequestHandler]) -> Iterator[ThreadingHTTPServer]:
    server = QuietHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _selected(pod: dict[str, Any], selector: str | None) -> bool:
    if not selector:
        return True
    labels = pod["metadata"].get("labels") or {}
    for term in selector.split(","):
        key, _, value = term.partition("=")
        if labels.get(key) != value:
            return False
    return True
