"""The model's other doors, tried from inside the cluster: the router Service, which asks for no
API key, and the inference operator's own load balancer of the endpoint, which forwards to it.
Pure judges of what the one-shot pods got back; door_checks.py sends them.

- "router refuses outsiders": a pod of a namespace the routers' NetworkPolicy does not admit
  (`default`), on a GPU node (the subnet the policy closes: specs/isolation/routers.py), posts a
  prompt without a key to the router's Service. The VPC CNI's network policy agent drops what a
  policy does not admit, so the door closed is curl timing out (exit 28); any HTTP answer, even
  an error, is the router taking the connection; another failure (a name that does not
  resolve, a refused connection) says nothing of the policy and the check is skipped.
- "operator load balancer": the Ingress the operator writes for the endpoint. The operator's
  source is not public; its Ingresses are the `alb-*` ones (aws/sagemaker-hyperpod-cli,
  helm_chart/HyperPodHelmChart/charts/inference-operator/migration/helm_to_addon.sh: "Extract
  ALB ARNs from ingress resources created by inference models", the Ingresses whose name matches
  `alb-.*`, in any namespace), and the endpoint's carries its name. Its scheme: the load
  balancer's own address once it has one (the controller writes its DNS name to the Ingress's
  status; an internal load balancer's name begins `internal-`, e.g. the
  `aws elbv2 create-load-balancer --scheme internal` example of the AWS CLI reference,
  https://docs.aws.amazon.com/cli/latest/reference/elbv2/create-load-balancer.html), before that
  the controller's annotation, `internal` when absent (kubernetes-sigs/aws-load-balancer-
  controller docs/guide/ingress/annotations.md). Internet-facing fails at once; an internal one
  is sent a prompt without a key from inside the cluster, as any pod could: a completion is the
  model answering without a key, a warning (exit 0): the operator's CRD has no setting that
  closes it, so a failure would fail every run of every stack and teach users to ignore verify.
"""

from __future__ import annotations

from typing import Any

from core.vocabulary import GPU_RESOURCE, GPU_ROLES, ROLE_LABEL
from hyperpod_dpd.verify import causes
from hyperpod_dpd.verify.prompts import PromptResult
from hyperpod_dpd.verify.results import Check
from specs.alb_controller.scheme import INTERNAL

ROUTER_CLOSED = "router refuses outsiders"
OPERATOR_LB = "operator load balancer"
DOOR_CHECKS = (ROUTER_CLOSED, OPERATOR_LB)
# A namespace every cluster has and the stack's policies admit to no router.
OUTSIDER_NAMESPACE = "default"
# How long the outsider's curl waits for the router: a NetworkPolicy drops the connection, so
# the refusal is a timeout; the router answers a short prompt well within it.
OUTSIDER_CURL_SECONDS = 15
SCHEME_ANNOTATION = "alb.ingress.kubernetes.io/scheme"
DEFAULT_SCHEME = INTERNAL  # the controller's, when the Ingress names none
INGRESS_PREFIX = "alb-"
INTERNAL_NAME_PREFIX = "internal-"  # how an internal load balancer's DNS name begins
KEY_ASKED = (401, 403)  # answers that refuse a request for want of credentials


def gpu_node_placement() -> dict[str, Any]:
    """Pod spec fields that put a small pod on a GPU node of the stack (its role label,
    specs/hyperpod.py node_labels) past their taint (node_taints), not on an unhealthy one."""
    return {
        "tolerations": [{"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"}],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": ROLE_LABEL, "operator": "In", "values": list(GPU_ROLES)}
                            ]
                        }
                    ]
                }
            }
        },
    }


def judge_outsider(result: PromptResult, context: dict[str, Any]) -> Check:
    """The router's answer, or its absence, to a prompt from a pod it should not admit."""
    where = f"a pod of {context['outsider']} on a GPU node"
    if not result.sent:
        return Check.skipped(ROUTER_CLOSED, f"could not try from {where}: {result.summary}")
    if result.status is not None:
        detail = f"the router answered {where}: {result.summary}"
        return Check.failed(ROUTER_CLOSED, detail, causes.ROUTER_OPEN, **context)
    if result.timed_out:
        return Check.ok(ROUTER_CLOSED, f"no answer to {where} ({result.summary})")
    detail = f"not judged: {where} got neither an answer nor a timeout ({result.summary})"
    return Check.skipped(ROUTER_CLOSED, detail)


def endpoint_ingresses(ingresses: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    """The operator's Ingresses of endpoint `name`: `alb-*` ones that carry its name, or that an
    object of that name owns."""

    def of_endpoint(ingress: dict[str, Any]) -> bool:
        meta = ingress.get("metadata") or {}
        ingress_name = str(meta.get("name") or "")
        if not ingress_name.startswith(INGRESS_PREFIX):
            return False
        owners = {str(o.get("name")) for o in meta.get("ownerReferences") or []}
        rest = ingress_name[len(INGRESS_PREFIX) :]
        return name in owners or rest == name or rest.startswith(f"{name}-")

    return [i for i in ingresses if of_endpoint(i)]


def scheme_of(ingress: dict[str, Any]) -> str:
    """The load balancer's scheme: by its address when it has one, else as the Ingress asks."""
    if (host := hostname_of(ingress)) is not None:
        return INTERNAL if host.startswith(INTERNAL_NAME_PREFIX) else "internet-facing"
    annotations = (ingress.get("metadata") or {}).get("annotations") or {}
    return str(annotations.get(SCHEME_ANNOTATION) or DEFAULT_SCHEME)


def hostname_of(ingress: dict[str, Any]) -> str | None:
    entries = ((ingress.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    return next((str(e["hostname"]) for e in entries if e.get("hostname")), None)


def judge_operator_lb(
    ingress: dict[str, Any], result: PromptResult | None, context: dict[str, Any]
) -> Check:
    """The endpoint's operator load balancer: its scheme, and what it did with a prompt without
    a key (`result`; None: not sent, `context['not_sent']` says why). Closed: no answer (a
    timeout) or one that asks for a key (401, 403); open: a completion. Anything else (the load
    balancer's own 404 or 5xx) shows neither and is not judged."""
    meta = ingress.get("metadata") or {}
    scheme, host = scheme_of(ingress), hostname_of(ingress)
    where = f"Ingress {meta.get('namespace')}/{meta.get('name')}, {scheme}"
    context = {**context, "ingress": meta.get("name"), "ingress_namespace": meta.get("namespace"),
               "scheme": scheme, "hostname": host or "none yet"}  # fmt: skip
    if scheme != INTERNAL:
        shown = host or "no address (the stack's role denies creating it)"
        return Check.failed(OPERATOR_LB, f"{where}: {shown}", causes.OPERATOR_LB_PUBLIC, **context)
    if host is None:
        return Check.skipped(OPERATOR_LB, f"{where}: no load balancer address yet")
    if result is None:
        return Check.skipped(OPERATOR_LB, f"{where}, {host}; not tried: {context['not_sent']}")
    if not result.sent:
        return Check.skipped(OPERATOR_LB, f"{where}, {host}; could not try: {result.summary}")
    if result.ok:
        detail = f"{where}, {host}: answered a prompt without a key: {result.summary}"
        return Check.warned(OPERATOR_LB, detail, causes.OPERATOR_LB_OPEN, **context)
    if result.timed_out or result.status in KEY_ASKED:
        return Check.ok(OPERATOR_LB, f"{where}, {host}: no answer without a key ({result.summary})")
    return Check.skipped(OPERATOR_LB, f"{where}, {host}: not judged ({result.summary})")
