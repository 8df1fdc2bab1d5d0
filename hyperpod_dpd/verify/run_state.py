"""What one `verify()` run holds (runner.py): the cluster, the target, the IEC and its facts,
the routing threshold and where it came from, the pods found so far and the report the checks
are added to. The runner's steps (runner.py, prompt_checks.py, door_checks.py) share it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hyperpod_dpd.shared.kube import Cluster
from hyperpod_dpd.verify.endpoint import endpoint_facts, pod_name, pod_phase
from hyperpod_dpd.verify.prompts import PromptClient
from hyperpod_dpd.verify.results import Check, Report, Target

DEFAULT_THRESHOLD = 4096


@dataclass(frozen=True)
class Options:
    send_prompts: bool = True
    model: str | None = None  # default: the IEC's --served-model-name or --model
    log_bytes: int = 8 * 1024 * 1024
    log_attempts: int = 3  # router/decoder lines may trail the answer by a moment
    poll_interval: float = 2.0


class RunState:
    def __init__(
        self,
        cluster: Cluster,
        target: Target,
        prompt_client: PromptClient | None,
        options: Options,
        on_check: Callable[[Check], None] | None,
        iec: dict[str, Any],
    ):
        self.cluster = cluster
        self.target = target
        self.client = prompt_client
        self.options = options
        self.on_check = on_check
        self.iec = iec
        self.facts = endpoint_facts(iec)
        if target.routing_threshold is not None:
            threshold, source = target.routing_threshold, "--routing-threshold"
        elif self.facts.threshold is not None:
            threshold, source = self.facts.threshold, "the IEC's pdSpec.routingThreshold"
        elif target.fallback_threshold is not None:
            threshold, source = target.fallback_threshold, "the stack config"
        else:
            threshold, source = DEFAULT_THRESHOLD, "the operator default"
        self.threshold = threshold
        via = prompt_client.description if (prompt_client and options.send_prompts) else "not sent"
        source_config = (iec.get("spec") or {}).get("modelSourceConfig") or {}
        location = str(source_config.get("modelLocation") or "")
        self.report = Report(target, threshold, source, via, model_location=location)
        self.base = {"name": target.name, "namespace": target.namespace}
        self.pods: dict[str, list[dict[str, Any]]] = {"prefill": [], "decode": []}
        self.router_pods: list[dict[str, Any]] = []

    def add(self, *checks: Check) -> None:
        for c in checks:
            self.report.checks.append(c)
            if self.on_check:
                self.on_check(c)

    def running(self, role: str) -> list[dict[str, Any]]:
        pods = self.router_pods if role == "router" else self.pods[role]
        return [p for p in pods if pod_phase(p) == "Running"]

    def log(
        self, namespace: str, pods: list[dict[str, Any]], container: str, since: int | None = None
    ) -> str:
        return "\n".join(
            self.cluster.read_log(
                namespace,
                pod_name(p),
                container,
                since_seconds=since,
                limit_bytes=self.options.log_bytes,
            )
            for p in pods
        )
