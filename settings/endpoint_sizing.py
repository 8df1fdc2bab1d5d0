"""The sizing of the configured endpoint on its decode instance type: the numbers the plan's summary
and the policies use, and the check that the model and TP are ones it can size."""

from __future__ import annotations

from core.catalog import INSTANCES, SizingError, instance_spec, load_model
from core.kv_cache import DOCS_PROMPT_TOKENS
from core.sizing import SizingReport, size
from core.vocabulary import PROJECT
from settings.cluster import InstanceGroups, gpu_groups, groups_with_role, instance_type_for
from settings.endpoint import EndpointConfig
from settings.errors import ConfigProblem


def size_endpoint(e: EndpointConfig, groups: InstanceGroups) -> SizingReport | None:
    """Size the endpoint on its decode instance type. None when that type is not one of the
    five DPD types (the instance-type policy reports it); SizingError on bad model/TP input."""
    if not gpu_groups(groups):
        return None  # config validation reports the missing GPU group
    decode_type = _decoder_type(e, groups)
    if decode_type not in INSTANCES:
        return None
    return size(
        load_model(e.model),
        instance_spec(decode_type),
        tp=e.role_tp("decode"),
        prompt_tokens=e.expected_prompt_tokens or min(DOCS_PROMPT_TOKENS, e.max_model_len),
        pd_buffer_bytes=e.pd_buffer_size,
        gpu_memory_utilization=e.gpu_memory_utilization,
        max_model_len=e.max_model_len,
        in_flight=e.expected_in_flight_transfers,
    )


def _decoder_type(e: EndpointConfig, groups: InstanceGroups) -> str:
    """The instance type of the pool that decodes (colocated: the one pool), among the groups
    the endpoint is pinned to when it is."""
    if e.groups is not None:
        groups = {n: g for n, g in groups.items() if n in e.groups} or groups
    pool = "decode" if e.mode == "dpd" else "colocated"
    if e.mode == "colocated" and not groups_with_role(groups, pool):
        pool = "decode"  # as colocated stacks always ran: the decode group's, else any GPU's
    return instance_type_for(groups, pool)


def check_sizing_inputs(
    e: EndpointConfig, groups: InstanceGroups, path: tuple[str, ...] = ("endpoint",)
) -> list[ConfigProblem]:
    """The model must be known and TP must fit it and the node (see core/sizing.py)."""
    try:
        size_endpoint(e, groups)
    except SizingError as exc:
        where = exc.key.replace("<group>", next(iter(groups_with_role(groups, "decode")), "decode"))
        if where.startswith("endpoint."):
            where = ".".join((*path, where.removeprefix("endpoint.")))
        key = f"{PROJECT}:{where}"
        return [ConfigProblem(key, exc.value, exc.problem, exc.fix)]
    return []
