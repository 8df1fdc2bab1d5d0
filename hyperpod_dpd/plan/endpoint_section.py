"""One endpoint's section of summary.md: its facts (model, image, groups, vLLM's numbers, who
may reach its pods and routers, what isolates them) and its sizing (KV cache, PD buffer,
headroom)."""

from __future__ import annotations

from core.sizing.kv_cache import buffer_in_chunks
from core.units import format_gib
from core.vocabulary import (
    INSTANCE_METADATA_POLICY,
    OPERATOR_NAMESPACE,
    ROUTERS_POLICY,
    network_policy_name,
)
from settings import StackSettings
from settings.endpoint.entries import EndpointEntry
from settings.endpoint.numbers import EffectiveNumbers, Given
from settings.stack import endpoint_sizing
from specs.isolation.routers import client_namespaces, private_cidrs


def endpoint_facts(settings: StackSettings, entry: EndpointEntry) -> list[tuple[str, str]]:
    e = entry.config
    checkpoint = settings.checkpoint_of(entry)  # the revision this endpoint serves
    numbers = entry.numbers
    groups = ", ".join(
        f"{name}: {g.instance_count} x {g.instance_type} ({g.role})"
        for name, g in settings.instance_groups.items()
    )
    vllm = ", ".join(
        f"{label} {_per_pool(numbers, name)}"
        for label, name in (
            ("TP", "tensor_parallel_size"),
            ("max-model-len", "max_model_len"),
            ("gpu-memory-utilization", "gpu_memory_utilization"),
        )
    )
    facts = [
        ("Endpoint", f"{e.name} in namespace {e.namespace}, mode {e.mode}"),
        ("Model", f"{e.model} from {checkpoint.source}@{checkpoint.revision}"),
        ("Image", e.image),
        (
            "Inference operator",
            f"{settings.inference_operator.version} (EKS add-on "
            f"{settings.inference_operator.addon_version})",
        ),
        ("Region / GPU AZ", f"{settings.region} / {settings.availability_zone_id}"),
        ("Instance groups", groups),
        ("vLLM", vllm),
        ("Pod ingress", _pod_ingress(settings, e.name)),
        ("Router ingress", _router_ingress(settings)),
        ("Pod isolation", _pod_isolation(settings)),
    ]
    if e.mode == "dpd":
        facts += [
            ("Replicas", f"prefill {e.prefill.replicas}, decode {e.decode.replicas}"),
            ("Routing", f"threshold {e.routing_threshold} tokens, {e.routing_strategy}"),
            ("PD buffer", f"{format_gib(numbers.pd_buffer.value)} per TP rank"
             + _from(numbers.pd_buffer)),
        ]  # fmt: skip
    return facts


def _pod_ingress(settings: StackSettings, name: str) -> str:
    policy = settings.network_policy
    if not policy.enabled:
        return "open: networkPolicy.enabled is false, any pod of the cluster reaches the workers"
    more = [f"namespaces {', '.join(policy.allow_namespaces)}"] if policy.allow_namespaces else []
    more += [f"addresses {', '.join(policy.allow_cidrs)}"] if policy.allow_cidrs else []
    collector = ", the metrics collector" if settings.observability.enabled else ""
    return (
        f"NetworkPolicy {network_policy_name(name)}: every pod of {OPERATOR_NAMESPACE} (each "
        "endpoint's router, the operator, its KEDA and load balancer controller), the "
        f"endpoint's own pods and its namespace's prefill and decode pods{collector}"
        f"{''.join(', ' + m for m in more)} (the VPC CNI enforces it)"
    )


def _router_ingress(settings: StackSettings) -> str:
    """Who may call the routers, which ask for no API key (specs/isolation/routers.py)."""
    if not settings.network_policy.enabled:
        return (
            "open: networkPolicy.enabled is false, any pod of the cluster calls the routers, "
            "which ask for no API key"
        )
    cidrs = [*private_cidrs(settings), *settings.network_policy.allow_cidrs]
    return (
        f"NetworkPolicy {ROUTERS_POLICY} in {OPERATOR_NAMESPACE}: its own pods, namespaces "
        f"{', '.join(client_namespaces(settings))}, addresses {', '.join(dict.fromkeys(cidrs))} "
        "(the private subnets: the EKS control plane, the load balancers, and any pod on a "
        "system node); the routers ask for no API key"
    )


def _pod_isolation(settings: StackSettings) -> str:
    """What keeps the pods of the endpoint's namespace from the node's role and other users'
    pods out of it (specs/isolation/instance_metadata.py, specs/isolation/admission.py)."""
    admitted = (
        "only the inference operator's pods (and the admins') run in the endpoint's namespace, "
        "within Pod Security baseline plus IPC_LOCK, from endpoint objects only the admins "
        "write; only the admins exec or port-forward into them (ValidatingAdmissionPolicies)"
    )
    # The GPU nodes' boot script refuses it to every pod whatever the policies
    # (infra/lifecycle_scripts/on_create.sh guard_pod_metadata).
    gpu_nodes = "the GPU nodes' boot script refuses it to their pods from the first packet"
    if not settings.network_policy.enabled:
        return (
            f"{admitted}; networkPolicy.enabled is false: pods on the system nodes can reach "
            f"the node's IAM role (the instance metadata service); {gpu_nodes}"
        )
    return (
        f"{admitted}; NetworkPolicy {INSTANCE_METADATA_POLICY} keeps them from the instance "
        f"metadata service (the node's IAM role) once it reaches a new pod, and {gpu_nodes}"
    )


def _per_pool(numbers: EffectiveNumbers, name: str) -> str:
    """One number as the pools run it: one value when they agree, else each pool's; named
    where it came from when a role's args or environmentVariables gave it."""
    given = {pool: getattr(p, name) for pool, p in numbers.pools.items()}
    values = {g.value for g in given.values()}
    if len(values) == 1 and not any(g.overridden for g in given.values()):
        return str(next(iter(values)))
    if len(given) == 1:
        [g] = given.values()
        return f"{g.value}{_from(g)}"
    return ", ".join(f"{pool} {g.value}{_from(g)}" for pool, g in given.items())


def _from(g: Given) -> str:
    return f" ({g.where})" if g.overridden else ""


def render_sizing(settings: StackSettings, entry: EndpointEntry, level: str = "##") -> list[str]:
    r = endpoint_sizing(settings, entry)
    if r is None:
        return [
            "",
            f"{level} Sizing",
            "",
            (
                "Not sized: the decoder's instance type is not one the sizing takes (a DPD type "
                "for DPD, a GPU type with known numbers for colocated)."
            ),
        ]
    gib = 2**30
    lines = [
        "",
        f"{level} Sizing ({r.model} on {r.instance_type}, TP {r.tensor_parallel_size})",
        "",
        "| | |",
        "|---|---|",
        f"| KV per token per rank | {r.kv_bytes_per_token_per_rank:,} B |",
        f"| LMCache chunk | {r.chunk_tokens} tokens = {r.chunk_bytes / 2**20:g} MiB |",
        f"| {_transfer_label(entry, r.prompt_tokens)} | {r.prompt_chunks} chunks, "
        f"{r.transfer_gib} GiB |",
        f"| PD buffer | {format_gib(r.pd_buffer_bytes)} = "
        f"{buffer_in_chunks(r.pd_buffer_bytes, r.kv_bytes_per_token_per_rank)} |",
        f"| Transfers in flight | {r.transfers_in_flight} |",
        f"| Headroom per GPU | prefill {r.prefill.headroom_bytes / gib:.2f} GiB, "
        f"decode {r.decode.headroom_bytes / gib:.2f} GiB |",
    ]
    if r.recommended_pd_buffer_bytes:
        lines.append(
            f"| Recommended PD buffer for {r.expected_in_flight} in flight | "
            f"{format_gib(r.recommended_pd_buffer_bytes)} |"
        )
    lines += [f"\n- {w}" for w in r.warnings]
    return lines


def _transfer_label(entry: EndpointEntry, tokens: int) -> str:
    """Whose prompt the transfer row sizes: the stack's expectedPromptTokens, else the DPD
    documentation's example prompt (core/sizing/kv_cache.py DOCS_PROMPT_TOKENS), said so."""
    if entry.config.expected_prompt_tokens:
        return f"Transfer of {tokens:,} tokens (expectedPromptTokens)"
    return (
        f"Transfer of {tokens:,} tokens (the DPD documentation's example prompt: set "
        "expectedPromptTokens for yours)"
    )
