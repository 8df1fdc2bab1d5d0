"""The model's doors, tried by `verify()` (runner.py): the split's front door refuses a prompt
without the API key and answers it with the key (front_door.py judges); the router refuses a pod
it does not admit, the operator's load balancer of the endpoint is internal and answers no prompt
without a key, and a pod on a GPU node gets no answer from the instance metadata service
(doors.py and node_metadata.py judge). Each request is sent here; the judges stay pure."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.vocabulary import CHAT_COMPLETIONS_PATH, OPERATOR_NAMESPACE, RouterService
from hyperpod_dpd.shared.kube import ClusterError
from hyperpod_dpd.verify import causes
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
from hyperpod_dpd.verify.front_door import (
    SPLIT_ANSWERS,
    SPLIT_CHECKS,
    judge_answer,
    judge_refusal,
)
from hyperpod_dpd.verify.node_metadata import METADATA_CLOSED, METADATA_URL, judge_metadata
from hyperpod_dpd.verify.prompts import PromptClient, short_prompt
from hyperpod_dpd.verify.results import Check
from hyperpod_dpd.verify.run_state import RunState

# The doors are tried from one-shot pods in the cluster, never from this machine.
NO_DOOR_PODS = "tried from pods in the cluster, not with --no-prompts or --router-url"


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


def front_door(run: RunState, clients: SplitClients | None) -> None:
    """The split refuses a prompt without the API key and answers it with the key."""
    split = run.target.split
    assert split is not None
    if not run.options.send_prompts or clients is None:
        run.add(*(Check.skipped(n, "prompts not sent (--no-prompts)") for n in SPLIT_CHECKS))
        return
    if split.url is None:
        run.add(*(Check.skipped(n, split.note) for n in SPLIT_CHECKS))
        return
    ctx = {**run.base, "url": split.url, "stack": split.stack or "STACK",
           "key_source": clients.key_source}  # fmt: skip
    prompt = short_prompt(run.options.model or run.facts.model)
    run.add(judge_refusal(clients.open.send(prompt), ctx))
    if clients.keyed is None:
        run.add(Check.skipped(SPLIT_ANSWERS, clients.no_key))
    else:
        run.add(judge_answer(clients.keyed.send(prompt), ctx))


def doors(run: RunState, clients: DoorClients | None) -> None:
    """The router refuses a pod it does not admit; the operator's load balancer of the
    endpoint is internal and answers no prompt without a key."""
    if run.options.send_prompts and clients is not None:
        run.add(_outsider(run, clients), _operator_lb(run, clients))
        run.add(_node_metadata(run, clients))
    else:
        run.add(Check.skipped(ROUTER_CLOSED, NO_DOOR_PODS), _operator_lb(run, None))
        run.add(Check.skipped(METADATA_CLOSED, NO_DOOR_PODS))


def _node_metadata(run: RunState, clients: DoorClients) -> Check:
    """A pod of a namespace with none of the stack's policies, on a GPU node, gets no
    answer from the instance metadata service (node_metadata.py)."""
    ctx = {**_door_context(run), "outsider": OUTSIDER_NAMESPACE, "url": METADATA_URL}
    prompt = short_prompt(run.options.model or run.facts.model)
    return judge_metadata(clients.outsider(OUTSIDER_NAMESPACE, METADATA_URL).send(prompt), ctx)


def _door_context(run: RunState) -> dict[str, Any]:
    stack = run.target.staged.stack if run.target.staged else "STACK"
    return {**run.base, "stack": stack}


def _outsider(run: RunState, clients: DoorClients) -> Check:
    admitted = run.target.router_clients
    if admitted is None:
        return Check.skipped(ROUTER_CLOSED, "the stack gives the routers no NetworkPolicy")
    if OUTSIDER_NAMESPACE in admitted:
        detail = f"{OUTSIDER_NAMESPACE} is a client namespace of the routers"
        return Check.skipped(ROUTER_CLOSED, detail)
    url = RouterService(run.target.name, run.target.namespace).url()
    ctx = {**_door_context(run), "outsider": OUTSIDER_NAMESPACE, "url": url}
    prompt = short_prompt(run.options.model or run.facts.model)
    return judge_outsider(clients.outsider(OUTSIDER_NAMESPACE, url).send(prompt), ctx)


def _operator_lb(run: RunState, clients: DoorClients | None) -> Check:
    t = run.target
    try:
        listed = [
            *run.cluster.list_ingresses(OPERATOR_NAMESPACE),
            *run.cluster.list_ingresses(t.namespace),
        ]
    except ClusterError as exc:
        return Check.failed(OPERATOR_LB, str(exc), causes.API_ERROR, **run.base)
    found = endpoint_ingresses(listed, t.name)
    if not found:
        detail = f"no alb-* Ingress of {t.name} in {OPERATOR_NAMESPACE} or {t.namespace}"
        return Check.skipped(OPERATOR_LB, detail)
    # The one that is not internal, if any, else the first.
    ingress = next((i for i in found if scheme_of(i) != INTERNAL), found[0])
    ctx = {**_door_context(run), "not_sent": NO_DOOR_PODS}
    host = hostname_of(ingress)
    if clients is None or host is None or scheme_of(ingress) != INTERNAL:
        return judge_operator_lb(ingress, None, ctx)
    # The path the operator's load balancer forwards: the IEC's invocationEndpoint.
    path = str((run.iec.get("spec") or {}).get("invocationEndpoint") or CHAT_COMPLETIONS_PATH)
    client = clients.inside(f"https://{host}/{path.lstrip('/')}")
    prompt = short_prompt(run.options.model or run.facts.model)
    return judge_operator_lb(ingress, client.send(prompt), ctx)
