"""The AWS DPD guide's deployment checks, automated: the run against a cluster
(https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-model-deployment-dpd.html).

The judges (`endpoint`, `routing`, `kv_transfer`) are pure functions of the API server's JSON and
log text; `verify()` fetches them in the documented order (endpoint, pods, router, roles, prompts,
router decisions, KV transfer) and never lets one failed request stop the rest: a check that
cannot run is reported, not raised. The prompts are sent by prompt_checks.py, the model's doors
tried by door_checks.py; what a run holds is run_state.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.vocabulary import DPD_ROLE_POD_LABEL, RouterService, network_policy_name
from hyperpod_dpd.shared.kube import ROUTER_NAMESPACE, Cluster, ClusterError
from hyperpod_dpd.verify import causes, logs
from hyperpod_dpd.verify.door_checks import DoorClients, SplitClients, doors, front_door
from hyperpod_dpd.verify.endpoint import (
    EXPECTED_ROLE,
    judge_iec,
    judge_pods,
    judge_roles,
    pod_name,
    role_pods,
)
from hyperpod_dpd.verify.guarded import WORKERS_GUARDED, judge_guarded
from hyperpod_dpd.verify.prompt_checks import ROUTER_SERVICE_CHECK, prompts
from hyperpod_dpd.verify.prompts import PromptClient
from hyperpod_dpd.verify.rendered import judge_decoder_freshness, judge_rendered_env
from hyperpod_dpd.verify.results import Check, Report, Target
from hyperpod_dpd.verify.revision import judge_served_copy
from hyperpod_dpd.verify.run_state import Options, RunState

ROLE_LABEL = DPD_ROLE_POD_LABEL


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
        prompts(run)
    if target.split is not None:
        front_door(run, split_clients)
    if target.doors:
        doors(run, door_clients)
    return run.report


class _Run(RunState):
    """The endpoint, its pods, the router and the workers' roles, read from the cluster."""

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
