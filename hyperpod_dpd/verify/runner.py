"""The AWS DPD guide's deployment checks, automated: the run against a cluster
(https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-model-deployment-dpd.html).

The judges (`endpoint`, `routing`, `kv_transfer`) are pure functions of the API server's JSON and
log text; `verify()` fetches them in the documented order (endpoint, pods, router, roles, prompts,
router decisions, KV transfer) and never lets one failed request stop the rest: a check that
cannot run is reported, not raised.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.vocabulary import (
    CHAT_COMPLETIONS_PATH,
    DPD_ROLE_POD_LABEL,
    OPERATOR_NAMESPACE,
    RouterService,
    network_policy_name,
)
from hyperpod_dpd.shared.kube import ROUTER_NAMESPACE, Cluster, ClusterError
from hyperpod_dpd.verify import causes, logs
from hyperpod_dpd.verify.doors import (
    INTERNAL,
    OPERATOR_LB,
    OUTSIDER_NAMESPACE,
    ROUTER_CLOSED,
    endpoint_ingresses,
    hostname_of,
    judge_operator_lb,
    judge_outsider,
    scheme_of,
)
from hyperpod_dpd.verify.endpoint import (
    EXPECTED_ROLE,
    endpoint_facts,
    judge_iec,
    judge_pods,
    judge_roles,
    pod_name,
    pod_phase,
    role_pods,
)
from hyperpod_dpd.verify.front_door import (
    SPLIT_ANSWERS,
    SPLIT_CHECKS,
    judge_answer,
    judge_refusal,
)
from hyperpod_dpd.verify.guarded import WORKERS_GUARDED, judge_guarded
from hyperpod_dpd.verify.kv_transfer import (
    KV_RECEIVED,
    KV_SPEED,
    PD_BUFFER,
    judge_buffer,
    judge_kv,
    kv_diagnostics,
)
from hyperpod_dpd.verify.matching import long_prompt_retrievals, match_decision
from hyperpod_dpd.verify.node_metadata import METADATA_CLOSED, METADATA_URL, judge_metadata
from hyperpod_dpd.verify.prompts import (
    Prompt,
    PromptClient,
    PromptResult,
    long_prompt,
    short_prompt,
)
from hyperpod_dpd.verify.rendered import judge_decoder_freshness, judge_rendered_env
from hyperpod_dpd.verify.results import FAIL, Check, Report, Target
from hyperpod_dpd.verify.revision import judge_served_copy
from hyperpod_dpd.verify.routing import (
    LONG_ANSWERED,
    LONG_ROUTED,
    SHORT_ANSWERED,
    SHORT_ROUTED,
    judge_prompt,
    judge_routing,
)

ROLE_LABEL = DPD_ROLE_POD_LABEL
# The doors are tried from one-shot pods in the cluster, never from this machine.
NO_DOOR_PODS = "tried from pods in the cluster, not with --no-prompts or --router-url"
DEFAULT_THRESHOLD = 4096
LOG_SLACK_SECONDS = 5

PROMPT_CHECKS = (
    SHORT_ANSWERED,
    LONG_ANSWERED,
    SHORT_ROUTED,
    LONG_ROUTED,
    KV_RECEIVED,
    KV_SPEED,
    PD_BUFFER,
)
# Prompts are only worth sending when these passed (a prompt would just time out).
ROUTER_SERVICE_CHECK = "router service"
PROMPT_BLOCKERS = (
    "endpoint ready",
    "endpoint is DPD",
    "prefill pods",
    "decode pods",
    "router pod",
    ROUTER_SERVICE_CHECK,
)


@dataclass(frozen=True)
class SplitClients:
    """What sends the split's two requests: one without the key, one with it (None: no key
    at hand, `no_key` says why), and where the key came from (for a refusal's cause)."""

    open: PromptClient
    keyed: PromptClient | None
    key_source: str = ""
    no_key: str = ""


@dataclass(frozen=True)
class DoorClients:
    """What tries the model's other doors without a key (doors.py): a client in `namespace`
    that runs on a GPU node, to the router's URL; and one to a URL found at run time (the
    operator's load balancer)."""

    outsider: Callable[[str, str], PromptClient]  # (namespace, url) -> client on a GPU node
    inside: Callable[[str], PromptClient]  # url -> client in the stack's benchmark namespace


@dataclass(frozen=True)
class Options:
    send_prompts: bool = True
    model: str | None = None  # default: the IEC's --served-model-name or --model
    log_bytes: int = 8 * 1024 * 1024
    log_attempts: int = 3  # router/decoder lines may trail the answer by a moment
    poll_interval: float = 2.0


class EndpointNotFound(Exception):
    """The InferenceEndpointConfig does not exist (bad input: exit 2)."""


def verify(
    cluster: Cluster,
    target: Target,
    prompt_client: PromptClient | None,
    options: Options,
    on_check: Callable[[Check], None] | None = None,
    split_clients: SplitClients | None = None,
    door_clients: DoorClients | None = None,
) -> Report:
    """Run every check. Raises EndpointNotFound when the IEC does not exist, ClusterError when
    the IEC cannot be read at all (both are bad input for the CLI)."""
    try:
        iec = cluster.get_iec(target.namespace, target.name)
    except ClusterError as exc:
        if exc.status == 404:
            raise EndpointNotFound(
                f"InferenceEndpointConfig {target.name} not found in namespace {target.namespace} "
                f"({cluster.server}); check --name/--namespace (or the stack's endpoint) and the "
                "kubeconfig context"
            ) from None
        raise
    run = _Run(cluster, target, prompt_client, options, on_check, iec)
    if target.colocated:
        run.served_copy()
        run.add(run.router_service())  # what the split needs of a colocated endpoint
    else:
        run.endpoint_and_pods()
        run.roles()
        run.prompts()
    if target.split is not None:
        run.front_door(split_clients)
    if target.doors:
        run.doors(door_clients)
    return run.report


class _Run:
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

    def endpoint_and_pods(self) -> None:
        t = self.target
        self.add(*judge_iec(self.iec, t))
        self.served_copy()
        for role in ("prefill", "decode"):
            ctx = {**self.base, "role": role, "container": t.container(role)}
            try:
                labelled = self.cluster.list_pods(t.namespace, f"{ROLE_LABEL}={role}")
            except ClusterError as exc:
                self.add(Check.failed(f"{role} pods", str(exc), causes.API_ERROR, **ctx))
                continue
            self.pods[role] = role_pods(labelled, t.container(role))
            self.add(judge_pods(f"{role} pods", self.pods[role], ctx, causes.NO_PODS))
        ctx = {**self.base, "prefix": t.router_prefix}
        try:
            listed = self.cluster.list_pods(ROUTER_NAMESPACE)
        except ClusterError as exc:
            self.add(Check.failed("router pod", str(exc), causes.API_ERROR, **ctx))
            return
        self.router_pods = [p for p in listed if pod_name(p).startswith(t.router_prefix)]
        self.add(
            judge_pods(
                "router pod", self.router_pods, ctx, causes.ROUTER_MISSING, causes.ROUTER_NOT_READY
            )
        )
        self.add(self.router_service())
        running = {role: self.running(role) for role in ("prefill", "decode")}
        self.add(judge_rendered_env(self.iec, running, t), judge_decoder_freshness(running, t))
        self.add(self.guarded(running))

    def guarded(self, running: dict[str, list[dict[str, Any]]]) -> Check:
        t = self.target
        try:
            policy = self.cluster.get_network_policy(t.namespace, network_policy_name(t.name))
            policies = self.cluster.list_network_policies(t.namespace) if policy else []
        except ClusterError as exc:
            return Check.failed(WORKERS_GUARDED, str(exc), causes.API_ERROR, **self.base)
        return judge_guarded(policy, running, t, policies)

    def served_copy(self) -> None:
        """With --stack: the IEC loads the copy the stack stages for the endpoint."""
        if check := judge_served_copy(self.iec, self.target):
            self.add(check)

    def router_service(self) -> Check:
        """The router's Service where the stack expects it (the split binds to it, the
        benchmark Job and the prompts below send to it)."""
        service = RouterService(self.target.name, self.target.namespace)
        ctx = {**self.base, "service": service.name, "service_namespace": service.namespace}
        try:
            listed = self.cluster.list_services(service.namespace)
        except ClusterError as exc:
            return Check.failed(ROUTER_SERVICE_CHECK, str(exc), causes.API_ERROR, **ctx)
        names = {s.get("metadata", {}).get("name") for s in listed}
        if service.name in names:
            return Check.ok(ROUTER_SERVICE_CHECK, f"{service.namespace}/{service.name}")
        return Check.failed(
            ROUTER_SERVICE_CHECK,
            f"no {service.name} among {len(names)} Services of {service.namespace}",
            causes.ROUTER_SERVICE_MISSING,
            **ctx,
        )

    def front_door(self, clients: SplitClients | None) -> None:
        """The split refuses a prompt without the API key and answers it with the key."""
        split = self.target.split
        assert split is not None
        if not self.options.send_prompts or clients is None:
            self.add(*(Check.skipped(n, "prompts not sent (--no-prompts)") for n in SPLIT_CHECKS))
            return
        if split.url is None:
            self.add(*(Check.skipped(n, split.note) for n in SPLIT_CHECKS))
            return
        ctx = {**self.base, "url": split.url, "stack": split.stack or "STACK",
               "key_source": clients.key_source}  # fmt: skip
        prompt = short_prompt(self.options.model or self.facts.model)
        self.add(judge_refusal(clients.open.send(prompt), ctx))
        if clients.keyed is None:
            self.add(Check.skipped(SPLIT_ANSWERS, clients.no_key))
        else:
            self.add(judge_answer(clients.keyed.send(prompt), ctx))

    def doors(self, clients: DoorClients | None) -> None:
        """The router refuses a pod it does not admit; the operator's load balancer of the
        endpoint is internal and answers no prompt without a key."""
        if self.options.send_prompts and clients is not None:
            self.add(self.outsider(clients), self.operator_lb(clients))
            self.add(self.node_metadata(clients))
        else:
            self.add(Check.skipped(ROUTER_CLOSED, NO_DOOR_PODS), self.operator_lb(None))
            self.add(Check.skipped(METADATA_CLOSED, NO_DOOR_PODS))

    def node_metadata(self, clients: DoorClients) -> Check:
        """A pod of a namespace with none of the stack's policies, on a GPU node, gets no
        answer from the instance metadata service (node_metadata.py)."""
        ctx = {**self.door_context, "outsider": OUTSIDER_NAMESPACE, "url": METADATA_URL}
        prompt = short_prompt(self.options.model or self.facts.model)
        return judge_metadata(clients.outsider(OUTSIDER_NAMESPACE, METADATA_URL).send(prompt), ctx)

    @property
    def door_context(self) -> dict[str, Any]:
        stack = self.target.staged.stack if self.target.staged else "STACK"
        return {**self.base, "stack": stack}

    def outsider(self, clients: DoorClients) -> Check:
        admitted = self.target.router_clients
        if admitted is None:
            return Check.skipped(ROUTER_CLOSED, "the stack gives the routers no NetworkPolicy")
        if OUTSIDER_NAMESPACE in admitted:
            detail = f"{OUTSIDER_NAMESPACE} is a client namespace of the routers"
            return Check.skipped(ROUTER_CLOSED, detail)
        url = RouterService(self.target.name, self.target.namespace).url()
        ctx = {**self.door_context, "outsider": OUTSIDER_NAMESPACE, "url": url}
        prompt = short_prompt(self.options.model or self.facts.model)
        return judge_outsider(clients.outsider(OUTSIDER_NAMESPACE, url).send(prompt), ctx)

    def operator_lb(self, clients: DoorClients | None) -> Check:
        t = self.target
        try:
            listed = [
                *self.cluster.list_ingresses(OPERATOR_NAMESPACE),
                *self.cluster.list_ingresses(t.namespace),
            ]
        except ClusterError as exc:
            return Check.failed(OPERATOR_LB, str(exc), causes.API_ERROR, **self.base)
        found = endpoint_ingresses(listed, t.name)
        if not found:
            detail = f"no alb-* Ingress of {t.name} in {OPERATOR_NAMESPACE} or {t.namespace}"
            return Check.skipped(OPERATOR_LB, detail)
        # The one that is not internal, if any, else the first.
        ingress = next((i for i in found if scheme_of(i) != INTERNAL), found[0])
        ctx = {**self.door_context, "not_sent": NO_DOOR_PODS}
        host = hostname_of(ingress)
        if clients is None or host is None or scheme_of(ingress) != INTERNAL:
            return judge_operator_lb(ingress, None, ctx)
        # The path the operator's load balancer forwards: the IEC's invocationEndpoint.
        path = str((self.iec.get("spec") or {}).get("invocationEndpoint") or CHAT_COMPLETIONS_PATH)
        client = clients.inside(f"https://{host}/{path.lstrip('/')}")
        prompt = short_prompt(self.options.model or self.facts.model)
        return judge_operator_lb(ingress, client.send(prompt), ctx)

    def roles(self) -> None:
        """Role wiring, from the workers' startup lines."""
        found: dict[str, set[str]] = {}
        context: dict[str, dict[str, Any]] = {}
        not_judged: dict[str, Check] = {}
        for role in ("prefill", "decode"):
            name, container = f"{role} role '{EXPECTED_ROLE[role]}'", self.target.container(role)
            running = self.running(role)
            context[role] = {
                **self.base,
                "container": container,
                "pod": pod_name(running[0]) if running else "?",
            }
            if not running:
                not_judged[role] = Check.skipped(name, f"no running {role} pod")
                continue
            try:
                found[role] = logs.pd_roles(self.log(self.target.namespace, running, container))
            except ClusterError as exc:
                not_judged[role] = Check.failed(name, str(exc), causes.API_ERROR, **context[role])
        judged = {c.name.split()[0]: c for c in judge_roles(found, context)}
        self.add(*(not_judged.get(role) or judged[role] for role in ("prefill", "decode")))

    def prompts(self) -> None:
        """Short and long prompt, then what the router and the decoder logged for them."""
        if not self.options.send_prompts or self.client is None:
            self.add(*(Check.skipped(n, "prompts not sent (--no-prompts)") for n in PROMPT_CHECKS))
            return
        failed = [c.name for c in self.report.checks if c.result == FAIL]
        if blockers := [n for n in PROMPT_BLOCKERS if n in failed]:
            why = f"not sent: {', '.join(blockers)} failed"
            self.add(*(Check.skipped(n, why) for n in PROMPT_CHECKS))
            return
        model = self.options.model or self.facts.model
        router_running = self.running("router")
        ctx = {
            **self.base,
            "router_pod": pod_name(router_running[0]) if router_running else "?",
            "url": getattr(self.client, "url", "?"),
            "timeout": float(getattr(self.client, "timeout", 0)),
            "threshold": self.threshold,
            "max_model_len": self.facts.max_model_len,
        }
        started = time.monotonic()

        def since() -> int:
            return math.ceil(time.monotonic() - started) + LOG_SLACK_SECONDS

        short = short_prompt(model)
        short_result = self.client.send(short)
        self.add(judge_prompt(SHORT_ANSWERED, short_result, ctx))
        long = long_prompt(self.threshold, model, self.facts.max_model_len)
        long_result: PromptResult | None = None
        if long is None:
            detail = f"threshold {self.threshold}, max-model-len {self.facts.max_model_len}"
            self.add(Check.failed(LONG_ANSWERED, detail, causes.PROMPT_TOO_LONG, **ctx))
        else:
            long_result = self.client.send(long)
            self.add(judge_prompt(LONG_ANSWERED, long_result, ctx))

        answered = [
            (prompt, name)
            for prompt, result, name in (
                (short, short_result, SHORT_ROUTED),
                (long, long_result, LONG_ROUTED),
            )
            if prompt is not None and result is not None and result.ok
        ]
        self.routing(answered, router_running, since, ctx)
        if long is None or long_result is None or not long_result.ok:
            self.add(
                *(
                    Check.skipped(n, "the long prompt was not answered")
                    for n in (KV_RECEIVED, KV_SPEED, PD_BUFFER)
                )
            )
            return
        self.kv_transfer(long, since)

    def routing(
        self,
        answered: list[tuple[Prompt, str]],
        router_running: list[dict[str, Any]],
        since: Callable[[], int],
        ctx: dict[str, Any],
    ) -> None:
        checks = {
            n: Check.skipped(n, f"the {n.split()[0]} prompt was not answered")
            for n in (SHORT_ROUTED, LONG_ROUTED)
        }
        if answered and not router_running:
            checks.update({n: Check.skipped(n, "no running router pod") for _, n in answered})
        elif answered:
            try:
                text = _read_until(
                    lambda: self.log(ROUTER_NAMESPACE, router_running, "router-container", since()),
                    lambda t: all(
                        match_decision(logs.routing_decisions(t), p) for p, _ in answered
                    ),
                    self.options,
                )
                checks.update(
                    {n: judge_routing(n, p, text, self.threshold, ctx) for p, n in answered}
                )
            except ClusterError as exc:
                checks.update(
                    {
                        n: Check.failed(n, str(exc), causes.API_ERROR, **self.base)
                        for _, n in answered
                    }
                )
        self.add(*checks.values())

    def kv_transfer(self, long: Prompt, since: Callable[[], int]) -> None:
        decoder = self.target.container("decode")
        running = self.running("decode")
        ctx = {**self.base, "container": decoder, "pod": pod_name(running[0]) if running else "?"}
        try:
            text = _read_until(
                lambda: self.log(self.target.namespace, running, decoder, since()),
                lambda t: bool(long_prompt_retrievals(t, long)),
                self.options,
            )
        except ClusterError as exc:
            names = (KV_RECEIVED, KV_SPEED, PD_BUFFER)
            self.add(*(Check.failed(n, str(exc), causes.API_ERROR, **ctx) for n in names))
            return
        diagnostics = kv_diagnostics(self.pods, self.target)
        self.add(*judge_kv(long_prompt_retrievals(text, long), ctx, diagnostics))
        self.add(judge_buffer(text, ctx))


def _read_until(read: Callable[[], str], done: Callable[[str], bool], options: Options) -> str:
    """Read a log up to `log_attempts` times until `done` holds; the last text either way."""
    text = ""
    for attempt in range(max(1, options.log_attempts)):
        text = read()
        if done(text):
            break
        if attempt + 1 < options.log_attempts:
            time.sleep(options.poll_interval)
    return text
