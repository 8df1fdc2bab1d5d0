"""A fake fleet of vLLM workers for a real Prometheus to scrape: one HTTP exporter per pod, serving
in Prometheus' text format every series the pinned vLLM exports (names, types and labels from
core/vllm/vllm_metrics.json, generated from its source), each series with a value of its own.

Pods are named as Kubernetes names a Deployment's pods (core/vllm/pod_names.py), and each is a scrape
target labelled `pod` and `namespace`, the labels the stack's queries select on.

Values: every (pod, engine) pair of the fleet has an index k; a gauge's series there is 2**k
(the KV cache usage 2**k / 2**K, a fraction), so the sum over any set of series is a number no
other set gives: a query that takes in one pod too many, or one too few, gives another value.
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from core.vllm.pod_names import pod_name as k8s_pod_name
from core.vllm.pod_names import worker_deployment
from core.vllm.vllm_metrics import VllmMetric, vllm_metrics
from tests.support.quiet_http import QuietHTTPServer

ENGINES = ("0", "1")  # two engines per pod (data parallel): two series per pod and metric
MODEL = "llama-3.3-70b"  # one model name for all: selectors must not lean on it
BUCKETS = ("0.5", "1.0", "+Inf")
FRACTIONS = {"vllm:kv_cache_usage_perc"}  # vLLM: "1 means 100 percent usage"


@dataclass
class Pod:
    name: str
    namespace: str
    endpoint: str
    pool: str
    first: int  # index k of its engine "0"; engine i is first + i
    port: int = 0
    server: ThreadingHTTPServer | None = field(default=None, repr=False)


@dataclass
class Fleet:
    pods: list[Pod]
    series_total: int  # K: (pod, engine) pairs of the fleet

    def value(self, metric: str, k: int) -> float:
        return 2.0**k / 2.0**self.series_total if metric in FRACTIONS else 2.0**k

    def pool_values(self, metric: str, namespace: str, endpoint: str, pool: str) -> list[float]:
        """The values of `metric`'s series on the pods of one pool."""
        return [
            self.value(metric, p.first + i)
            for p in self.pods
            if (p.namespace, p.endpoint, p.pool) == (namespace, endpoint, pool)
            for i in range(len(ENGINES))
        ]

    def exposition(self, pod: Pod) -> str:
        lines = []
        for m in vllm_metrics().values():
            lines += _family(m, pod, self)
        return "\n".join(lines) + "\n"


def _labels(m: VllmMetric, engine: str, extra: dict[str, str] | None = None) -> str:
    # A label vLLM sets at run time (cache_config_info's are its config keys): engine alone.
    names = m.labels if m.labels is not None else ("engine",)
    values = {"model_name": MODEL, "engine": engine}
    pairs = {n: values.get(n, f"{n}-value") for n in names} | (extra or {})
    return "{" + ",".join(f'{k}="{v}"' for k, v in pairs.items()) + "}"


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _family(m: VllmMetric, pod: Pod, fleet: Fleet) -> list[str]:
    lines = [f"# HELP {m.name} {_escape_help(m.help)}", f"# TYPE {m.name} {m.type}"]
    for i, engine in enumerate(ENGINES):
        v = fleet.value(m.name, pod.first + i)
        if m.type == "histogram":
            bucket, total, count = m.samples
            for j, le in enumerate(BUCKETS):
                lines.append(f"{bucket}{_labels(m, engine, {'le': le})} {v * (j + 1)}")
            lines.append(f"{total}{_labels(m, engine)} {v}")
            lines.append(f"{count}{_labels(m, engine)} {v * len(BUCKETS)}")
        else:
            lines += [f"{sample}{_labels(m, engine)} {v}" for sample in m.samples]
    return lines


def fleet_of(endpoints: list[tuple[str, str, str]], replicas: int = 2, seed: int = 5) -> Fleet:
    """The pods of `endpoints` ((namespace, name, mode) each), `replicas` per pool."""
    rng = random.Random(seed)
    pods: list[Pod] = []
    k = 0
    for namespace, name, mode in endpoints:
        pools = ("prefill", "decode") if mode == "dpd" else ("colocated",)
        for pool in pools:
            for _ in range(replicas):
                pod_name = k8s_pod_name(worker_deployment(name, pool), rng)
                pods.append(Pod(pod_name, namespace, name, pool, k))
                k += len(ENGINES)
    return Fleet(pods, k)


def serve(fleet: Fleet) -> None:
    """One exporter per pod on 127.0.0.1 (a free port each), in daemon threads."""
    for pod in fleet.pods:
        body = fleet.exposition(pod).encode()

        class Handler(BaseHTTPRequestHandler):
            payload = body

            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(self.payload)))
                self.end_headers()
                self.wfile.write(self.payload)

            def log_message(self, *args):  # quiet
                pass

        pod.server = QuietHTTPServer(("127.0.0.1", 0), Handler)
        pod.port = pod.server.server_address[1]
        threading.Thread(target=pod.server.serve_forever, daemon=True).start()


def stop(fleet: Fleet) -> None:
    """Every exporter stopped at once: each shutdown() waits for its loop to notice (up to its
    poll interval, 0.5 s), and one after another the fleet's 24 took 6 s."""
    servers = [pod.server for pod in fleet.pods if pod.server is not None]
    stopping = [threading.Thread(target=server.shutdown) for server in servers]
    for thread in stopping:
        thread.start()
    for thread in stopping:
        thread.join()
    for server in servers:
        server.server_close()
