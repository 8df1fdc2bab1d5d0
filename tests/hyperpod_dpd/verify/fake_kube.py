"""A local fake of the cluster `verify` talks to, serving a recorded deployment and its logs.

`FakeKube` holds the state (recorded IEC, pods, logs with their age) and plays the parts of the
cluster that react to the prompts:
- the router: a prompt's `Conditional routing` line is computed from the prompt it receives
  (estimated_tokens = characters / 4, as in the docs' 6750 for 27,000 characters), and a
  disaggregated prompt makes the decoder log the recorded `decoder-kv-<variant>.log` lines;
- the one-shot prompt pod: created Pending, then on the next reads ContainerCreating, then run:
  its env is spliced into the JSON body exactly as its shell script does, and its log holds the
  router's answer and the `__HTTP_STATUS__=` line curl's `-w` prints (an env entry from a Secret
  resolved as the kubelet does: a missing Secret keeps the pod waiting, CreateContainerConfigError);
- the canary's traffic split at its name (SPLIT_URL): the router behind its listener, which answers
  401 without `Authorization: Bearer <split_key>` (specs/traffic/__init__.py), unless `split_open`;
- the routers' NetworkPolicy: a prompt pod reaches the router only if the fake's policies of the
  router's namespace admit it (tests/workloads/network_paths.py: a pod placed on a GPU node has
  a GPU subnet address, others a system node's); refused, curl times out;
- the operator's load balancer of the endpoint (`ingresses`, at OPERATOR_LB_URL): it forwards to
  the router without a key when `operator_lb_open`, else the connection times out;
- the instance metadata service (METADATA_URL): a GPU node's boot script refuses pods the
  connection (infra/lifecycle_scripts/on_create.sh) unless `gpu_metadata_open`; elsewhere it
  answers, 401 to a request without an IMDSv2 token.

The Kubernetes API paths it answers, and the HTTP server it runs on, are in kube_api.py;
`ChatServer` is the same router behind a plain /v1/chat/completions URL (the --router-url mode).
"""

from __future__ import annotations

import copy
import json
import re
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from core import api_key
from core.vocabulary import BENCHMARK_NAMESPACE, ROLE_LABEL
from hyperpod_dpd.verify.node_metadata import METADATA_URL
from settings import parse_settings
from specs.isolation.instance_metadata import metadata_egress
from specs.isolation.network_policies import network_policy
from specs.isolation.routers import router_ingress
from specs.traffic.keys import UNAUTHORIZED
from tests.conftest import stack_raw
from tests.hyperpod_dpd.verify.kube_api import KubeApi, serve_http, status
from tests.workloads.network_paths import Pod, reaches

RECORDED = Path(__file__).parent / "recorded"
NAME, NAMESPACE = "llama-3-3-70b", "inference"
ROUTER_NS = "hyperpod-inference-system"
ROUTER_POD = "llama-3-3-70b-inference-router-7b9d6f5c4-h8k2p"
PREFILL_POD = "prefill-llama-3-3-70b-6d8f9c7b54-x2k4q"
DECODE_POD = "decode-llama-3-3-70b-5c7d8e9f61-9qz7m"
ROUTER_URL = (
    f"http://{NAME}-{NAMESPACE}-routing-service.{ROUTER_NS}.svc.cluster.local:443"
    "/v1/chat/completions"
)
AGE_MARK = re.compile(r"^### age (\d+)s")
# The canary's split, at the name it gives it (Pulumi.canary.yaml trafficListener.domainName).
SPLIT_URL = "https://llm.internal.example.com/v1/chat/completions"
SPLIT_KEY = "0123456789abcdefghijklmnopqrstuvwxyz0123456789ab"
# The operator's internal load balancer of the endpoint, as its Ingress's status gives it.
OPERATOR_LB_HOST = "internal-k8s-hyperpod-alb1234-0123456789.us-east-2.elb.amazonaws.com"
OPERATOR_LB_URL = f"https://{OPERATOR_LB_HOST}/v1/chat/completions"
# Addresses of the dev VPC's subnets (core/aws/subnets.py): a GPU node's pods, a system node's.
GPU_POD_IP, SYSTEM_POD_IP = "10.0.5.50", "10.0.64.50"
TIMED_OUT = "curl: (28) Connection timed out after 15001 milliseconds\n", "000", 28
REFUSED = "curl: (7) Failed to connect to 169.254.169.254 port 80: Connection refused\n", "000", 7


def recorded_json(name: str) -> Any:
    return json.loads((RECORDED / name).read_text())


def recorded_log(name: str) -> list[tuple[float, str]]:
    """Lines of a recorded log with their time; `### age Ns` lines date the lines after them."""
    now, age, out = time.time(), 0.0, []
    for line in (RECORDED / name).read_text().splitlines():
        if m := AGE_MARK.match(line):
            age = float(m[1])
        else:
            out.append((now - age, line))
    return out


def dev_network_policy() -> dict[str, Any]:
    settings = parse_settings(stack_raw("dev"))
    return dict(network_policy("policy", (), settings, NAME, NAMESPACE).props)


def dev_routers_policy() -> dict[str, Any]:
    """The routers' NetworkPolicy the dev stack renders (specs/isolation/routers.py)."""
    policy = router_ingress("policy", (), parse_settings(stack_raw("dev")))
    assert policy is not None
    return dict(policy.props)


def operator_ingress(scheme: str | None = None, host: str | None = OPERATOR_LB_HOST) -> dict:
    """The Ingress the operator writes for the endpoint (helm_to_addon.sh finds them as alb-*)."""
    annotations = {"alb.ingress.kubernetes.io/scheme": scheme} if scheme else {}
    return {
        "metadata": {"name": f"alb-{NAME}-{NAMESPACE}", "namespace": ROUTER_NS,
                     "annotations": annotations},
        "spec": {"ingressClassName": "alb"},
        "status": {"loadBalancer": {"ingress": [{"hostname": host}] if host else []}},
    }  # fmt: skip


def dev_metadata_policy() -> dict[str, Any]:
    """The namespace's `no-instance-metadata` policy, as the program renders it."""
    return dict(metadata_egress("policy", (), NAMESPACE).props)


class FakeKube(KubeApi):
    def __init__(self) -> None:
        self.lock = threading.RLock()  # on_prompt runs inside a pod read
        self.iecs = {(NAMESPACE, NAME): recorded_json("iec-llama-3-3-70b.json")}
        self.pods: dict[str, list[dict[str, Any]]] = {
            NAMESPACE: recorded_json("pods-inference.json")["items"],
            ROUTER_NS: recorded_json("pods-hyperpod-inference-system.json")["items"],
        }
        self.logs: dict[tuple[str, str, str], list[tuple[float, str]]] = {
            (NAMESPACE, PREFILL_POD, f"prefill-{NAME}"): recorded_log("prefill-llama-3-3-70b.log"),
            (NAMESPACE, DECODE_POD, f"decode-{NAME}"): recorded_log("decode-llama-3-3-70b.log"),
            (ROUTER_NS, ROUTER_POD, "router-container"): recorded_log("router-container.log"),
        }
        # The router's Service, as the DPD docs' "Verifying" names it.
        self.services: dict[str, list[dict[str, Any]]] = {
            ROUTER_NS: [{
                "metadata": {"name": f"{NAME}-{NAMESPACE}-routing-service", "namespace": ROUTER_NS},
                "spec": {"ports": [{"port": 443}]},
            }]
        }  # fmt: skip
        # The NetworkPolicy the dev stack gives the endpoint, as the program renders it.
        self.network_policies = {
            (p["metadata"]["namespace"], p["metadata"]["name"]): p
            for p in (dev_network_policy(), dev_metadata_policy(), dev_routers_policy())
        }
        # namespace -> Ingresses; the recorded deployment's were not recorded.
        self.ingresses: dict[str, list[dict[str, Any]]] = {}
        self.operator_lb_open = True  # the operator's load balancer forwards without a key
        self.gpu_metadata_open = False  # a GPU node without the boot script's rule
        # (namespace, name) -> data: the Secrets a prompt pod's env may name.
        self.secrets: dict[tuple[str, str], dict[str, str]] = {
            (BENCHMARK_NAMESPACE, api_key.SECRET_NAME): {api_key.SECRET_KEY: SPLIT_KEY}
        }
        self.split_key = SPLIT_KEY  # the key the split's listener rule holds
        self.split_open = False  # a listener that forwards without a key
        self.router_threshold: int | None = None  # None: the IEC's routingThreshold
        self.kv_variant = "healthy"  # decoder-kv-<variant>.log
        self.prompt_pod_mode = "complete"  # complete | stuck
        self.requests: list[tuple[str, str]] = []
        self.created: list[dict[str, Any]] = []
        self.deleted: list[str] = []
        self.prompts: list[str] = []
        self._pod_reads: dict[str, int] = {}
        self.server: ThreadingHTTPServer | None = None

    # Editing the recorded state (the broken deployments) -------------------------------------

    def pod(self, namespace: str, name: str) -> dict[str, Any]:
        return next(p for p in self.pods[namespace] if p["metadata"]["name"] == name)

    def replace_in_log(self, pod: str, container: str, old: str, new: str) -> None:
        key = next(k for k in self.logs if k[1] == pod and k[2] == container)
        assert any(old in line for _, line in self.logs[key]), old
        self.logs[key] = [(t, line.replace(old, new)) for t, line in self.logs[key]]

    # The router and the decoder, reacting to a prompt ----------------------------------------

    def on_prompt(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        model = body.get("model")
        if model != "/opt/ml/model":
            return 404, {
                "object": "error",
                "message": f"The model `{model}` does not exist.",
                "type": "NotFoundError",
                "code": 404,
            }
        content = body["messages"][0]["content"]
        iec = self.iecs[(NAMESPACE, NAME)]
        threshold = self.router_threshold
        if threshold is None:
            threshold = iec["spec"]["pdSpec"]["routingThreshold"]
        estimated = len(content) // 4
        disaggregate = estimated >= threshold
        request = str(uuid.uuid4())
        now = time.time()
        stamp = time.strftime("%Y-%m-%d %H:%M:%S,000", time.gmtime(now))
        router = [
            f"[{stamp}] [INFO] Conditional routing: estimated_tokens={estimated}, "
            f"threshold={threshold}, disaggregate={disaggregate}"
        ]
        decoder: list[str] = []
        if disaggregate:
            router += [
                f"[{stamp}] [INFO] DPD prefill selection: delegating to PrefixAwareRouter with 1 "
                "endpoints",
                f"[{stamp}] [INFO] DPD prefill selection: PrefixAwareRouter selected "
                "http://10.1.54.203:8081",
                f"[{stamp}] [INFO] {request} prefill time (TTFT): 7.1913",
                f"[{stamp}] [INFO] Routing request {request} to http://10.1.54.203:8081 at "
                f"{now:.4f}, process time = 7.1929",
            ]
            req_id = f"cmpl-{uuid.uuid4().hex[:16]}"
            decoder = (RECORDED / f"decoder-kv-{self.kv_variant}.log").read_text().splitlines()
            decoder = [line.replace("{req_id}", req_id) for line in decoder]
        router.append(
            f"[{stamp}] [INFO] Routing request {request} to decoder http://10.1.172.158:8081 at "
            f"{now:.4f}, process time = 0.0144"
        )
        with self.lock:
            self.prompts.append(content)
            self.logs[(ROUTER_NS, ROUTER_POD, "router-container")] += [(now, x) for x in router]
            self.logs[(NAMESPACE, DECODE_POD, f"decode-{NAME}")] += [(now, x) for x in decoder]
        answer = {
            "id": f"chatcmpl-{request[:8]}",
            "object": "chat.completion",
            "created": int(now),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": "The text is a repetitive sequence of"
                        if disaggregate
                        else "Disaggregated prefill-decode is an inference architecture that",
                    },
                    "finish_reason": "length",
                }
            ],
            "usage": {"prompt_tokens": estimated, "completion_tokens": 8},
        }
        return 200, answer

    def takes(self, url: str, pod: dict[str, Any]) -> bool:
        """Whether a connection from `pod` to `url` gets through (else it times out)."""
        if url == ROUTER_URL:
            return self.router_admits(pod)
        return url != OPERATOR_LB_URL or self.operator_lb_open

    @staticmethod
    def on_gpu_node(pod: dict[str, Any]) -> bool:
        """Placed on a GPU node by its node affinity (the role label of the GPU groups)."""
        return ROLE_LABEL in json.dumps(pod["spec"].get("affinity") or {})

    def router_admits(self, pod: dict[str, Any]) -> bool:
        """Whether the routers' namespace's policies let this pod's connection in."""
        source = Pod(
            pod["metadata"]["namespace"],
            pod["metadata"].get("labels") or {},
            ip=GPU_POD_IP if self.on_gpu_node(pod) else SYSTEM_POD_IP,
        )
        router = Pod(ROUTER_NS, {"app": "router"}, ip=SYSTEM_POD_IP)
        return reaches(list(self.network_policies.values()), source, router, 8080)

    # The traffic split's listener -------------------------------------------------------------

    def at_split(self, authorization: str | None, body: dict[str, Any]) -> tuple[int, Any]:
        """The listener: its rule forwards a request with the key to the router, its default
        answers the rest with its fixed 401."""
        if self.split_open or authorization == api_key.bearer(self.split_key):
            return self.on_prompt(body)
        return 401, json.loads(UNAUTHORIZED["fixedResponse"]["messageBody"])

    # The one-shot prompt pod -------------------------------------------------------------------

    def create_pod(self, namespace: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        name = body["metadata"]["name"]
        assert body["spec"]["restartPolicy"] == "Never"
        assert len(body["spec"]["containers"]) == 1
        pod = copy.deepcopy(body)
        pod["metadata"].update(
            {"namespace": namespace, "uid": str(uuid.uuid4()), "creationTimestamp": _now()}
        )
        pod["status"] = {"phase": "Pending", "qosClass": "Burstable"}
        with self.lock:
            if any(p["metadata"]["name"] == name for p in self.pods.setdefault(namespace, [])):
                return 409, status(409, "AlreadyExists", f'pods "{name}" already exists')
            self.pods[namespace].append(pod)
            self.created.append(copy.deepcopy(body))
        return 201, pod

    def advance_prompt_pod(self, pod: dict[str, Any]) -> None:
        name = pod["metadata"]["name"]
        reads = self._pod_reads[name] = self._pod_reads.get(name, 0) + 1
        container = pod["spec"]["containers"][0]
        if self.prompt_pod_mode == "stuck":
            pod["status"]["containerStatuses"] = [
                _waiting(
                    container, "ImagePullBackOff", f'Back-off pulling image "{container["image"]}"'
                )
            ]
            return
        if reads == 1:
            pod["status"]["containerStatuses"] = [_waiting(container, "ContainerCreating", "")]
            return
        if pod["status"]["phase"] != "Pending":
            return
        env: dict[str, str] = {}
        for entry in container["env"]:
            if "value" in entry:
                env[entry["name"]] = entry["value"]
                continue
            ref = entry["valueFrom"]["secretKeyRef"]
            value = self.secrets.get((pod["metadata"]["namespace"], ref["name"]), {}).get(
                ref["key"]
            )
            if value is None:  # the kubelet's answer to a missing Secret
                message = f'secret "{ref["name"]}" not found'
                waiting = _waiting(container, "CreateContainerConfigError", message)
                pod["status"]["containerStatuses"] = [waiting]
                return
            env[entry["name"]] = value
        # What the script does: P = SENTENCE x REPEAT; printf HEAD P TAIL | curl URL [-H key].
        if env["URL"] == METADATA_URL:
            if self.on_gpu_node(pod) and not self.gpu_metadata_open:
                output, code, exit_code = REFUSED
            else:
                output, code, exit_code = "", "401", 0
        elif env["URL"] not in (ROUTER_URL, SPLIT_URL, OPERATOR_LB_URL):
            host = urlsplit(env["URL"]).hostname
            output, code, exit_code = f"curl: (6) Could not resolve host: {host}\n", "000", 6
        elif not self.takes(env["URL"], pod):
            output, code, exit_code = TIMED_OUT
        else:
            body = json.loads(env["HEAD"] + env["SENTENCE"] * int(env["REPEAT"]) + env["TAIL"])
            key = env.get(api_key.ENV)
            if env["URL"] == SPLIT_URL:
                http, answer = self.at_split(api_key.bearer(key) if key else None, body)
            else:
                http, answer = self.on_prompt(body)
            output, code, exit_code = json.dumps(answer), str(http), 0
        phase = "Succeeded" if exit_code == 0 else "Failed"
        pod["status"]["phase"] = phase
        pod["status"]["containerStatuses"] = [
            {
                "name": container["name"],
                "image": container["image"],
                "imageID": "",
                "ready": False,
                "restartCount": 0,
                "state": {"terminated": {"exitCode": exit_code, "reason": "Completed"}},
            }
        ]
        log = f"{output}\n__HTTP_STATUS__={code}"
        self.logs[(pod["metadata"]["namespace"], name, container["name"])] = [
            (time.time(), line) for line in log.splitlines()
        ]


class ChatServer:
    """The router behind a plain URL: POST /v1/chat/completions -> FakeKube.on_prompt; with
    `split`, the traffic split's listener in front of it (FakeKube.at_split)."""

    def __init__(self, fake: FakeKube, split: bool = False):
        self.fake = fake
        self.split = split
        self.url = ""

    @contextmanager
    def serving(self) -> Iterator[ChatServer]:
        fake, split = self.fake, self.split

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if self.path != "/v1/chat/completions":
                    code, answer = 404, {"detail": "Not Found"}
                elif split:
                    body = json.loads(self.rfile.read(length))
                    code, answer = fake.at_split(self.headers.get(api_key.HEADER), body)
                else:
                    code, answer = fake.on_prompt(json.loads(self.rfile.read(length)))
                data = json.dumps(answer).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        with serve_http(Handler) as server:
            host, port = server.server_address[:2]
            self.url = f"http://{host}:{port}/v1/chat/completions"
            yield self


def _waiting(container: dict[str, Any], reason: str, message: str) -> dict[str, Any]:
    return {
        "name": container["name"],
        "image": container["image"],
        "imageID": "",
        "ready": False,
        "restartCount": 0,
        "state": {"waiting": {"reason": reason, "message": message}},
    }


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
