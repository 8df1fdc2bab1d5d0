"""The sizing of the configured endpoint on its decode instance type: the numbers the plan's summary
and the policies use, the check that the model and TP are ones it can size, and the check that
one engine step (--max-num-batched-tokens) fits beside the weights and the KV cache."""

from __future__ import annotations

from core.catalog import GIB, INSTANCES, SizingError, load_model
from core.gpu_memory import StepBudget, step_budget
from core.gpu_types import gpu_spec
from core.kv_cache import DOCS_PROMPT_TOKENS
from core.sizing import SizingReport, size
from core.vocabulary import PROJECT
from settings.cluster import InstanceGroups, gpu_groups, groups_with_role, instance_type_for
from settings.endpoint import EndpointConfig
from settings.endpoints import EndpointEntry, placement
from settings.errors import ConfigProblem, set_fix
from settings.vllm_args import arg_number, read_args


def size_endpoint(e: EndpointConfig, groups: InstanceGroups) -> SizingReport | None:
    """Size the endpoint on its decode instance type: a colocated one on any GPU type with EC2
    numbers (core/gpu_types.py), a DPD one on the five DPD types only. None otherwise: DPD on
    another type is the instance-type policy's to refuse (a TP fix sized for it would mislead),
    a type without numbers settings/gpu_groups.py's. SizingError on bad model/TP input."""
    if not gpu_groups(groups):
        return None  # config validation reports the missing GPU group
    decode_type = _decoder_type(e, groups)
    instance = gpu_spec(decode_type) if e.mode == "colocated" else INSTANCES.get(decode_type)
    if instance is None:
        return None
    return size(
        load_model(e.model),
        instance,
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
        if where == "endpoint.tensorParallelSize" and e.decode.tensor_parallel_size:
            where = "endpoint.decode.tensorParallelSize"  # the decoder's own TP is what was sized
        if where.startswith("endpoint."):
            where = ".".join((*path, where.removeprefix("endpoint.")))
        key = f"{PROJECT}:{where}"
        fix = (
            exc.fix
            if exc.suggestion is None
            else f"{exc.fix.rstrip('.')}: {set_fix(key, exc.suggestion)}"
        )
        return [ConfigProblem(key, exc.value, exc.problem, fix)]
    return []


# The fix offered rounds the largest step budget that fits down to a multiple of this (vLLM's
# usual chunked-prefill budget), so the number is one a person would type.
BUDGET_STEP = 2048


def check_step_budget(
    entry: EndpointEntry, groups: InstanceGroups, alone: bool
) -> list[ConfigProblem]:
    """A --max-num-batched-tokens vLLM can start with: at startup it profiles one step of that
    many tokens and takes the peak out of its share before sizing the KV cache; if the KV cache
    of one --max-model-len sequence no longer fits, it refuses to start (core/gpu_memory.py).

    Judged where the budget is set: endpoint.colocated.maxNumBatchedTokens (colocated mode; the
    key is ignored in dpd mode), else --max-num-batched-tokens in the role's args (the colocated
    worker runs the decoder's). The worker's numbers are the settings' or the role args' own
    (--tensor-parallel-size, --gpu-memory-utilization, --max-model-len), on the pool's instance
    type with the least GPU memory."""
    e = entry.config
    try:
        model = load_model(e.model)
    except SizingError:
        return []  # check_sizing_inputs reports it
    problems = []
    for pool in entry.pools():
        role = "decode" if pool == "colocated" else pool
        read = read_args(getattr(e, role).args, role, entry.path)
        if read.problems:
            continue  # check_role_args reports them
        args = read.values
        if pool == "colocated" and e.colocated.max_num_batched_tokens is not None:
            tokens = e.colocated.max_num_batched_tokens
            key, value = entry.config_key("colocated", "maxNumBatchedTokens"), tokens
        else:
            tokens = arg_number(args, "--max-num-batched-tokens", int)
            if tokens is None:
                continue  # vLLM's default budget
            key = entry.config_key(role, "args")
            value = f"--max-num-batched-tokens {tokens}"
        types = [groups[n].instance_type for n in placement(entry, pool, groups, alone)]
        known = sorted(filter(None, map(gpu_spec, types)), key=_gpu_memory)
        tp = arg_number(args, "--tensor-parallel-size", int) or e.role_tp(role)
        utilization = arg_number(args, "--gpu-memory-utilization", float)
        max_len = arg_number(args, "--max-model-len", int) or e.max_model_len
        if not known or tokens < 1 or not 0 < (utilization or e.gpu_memory_utilization) <= 1:
            continue  # no type with GPU numbers (settings/gpu_groups.py), or a bad number
        utilization = utilization or e.gpu_memory_utilization
        budget = step_budget(model, known[0], tp, utilization, max_len, role)
        if budget.holds(tokens) or not budget.largest:
            # No budget at all: the worker cannot start whatever the budget, and the gpu-memory
            # policy says what would (a config problem here would stop the plan before it).
            continue
        problems.append(ConfigProblem(
            key, value,
            _allowed(budget, tokens, known[0].name, model.name, tp, utilization, max_len),
            _fix(budget, key, key.endswith(".args")),
        ))  # fmt: skip
    return problems


def _gpu_memory(instance) -> int:
    return instance.gpu_memory_bytes


def _allowed(
    b: StepBudget, tokens: int, itype: str, model: str, tp: int, utilization: float, max_len: int
) -> str:
    where = (
        f"{model} at TP {tp} on {itype}: one step of {tokens:,} tokens needs "
        f"{b.activation_bytes(tokens) / GIB:.1f} GiB of activations per GPU (an estimate) beside "
        f"{b.weights_bytes / GIB:.1f} GiB of weights and the KV cache of one {max_len}-token "
        f"sequence ({b.kv_cache_bytes / GIB:.2f} GiB), in vLLM's {b.share_bytes / GIB:.1f} GiB "
        f"share (gpuMemoryUtilization {utilization:g}); vLLM would refuse to start"
    )
    return f"at most {b.largest:,} for {where}"


def _fix(b: StepBudget, key: str, in_args: bool) -> str:
    value = b.largest // BUDGET_STEP * BUDGET_STEP or b.largest
    if in_args:
        return f"set --max-num-batched-tokens in {key} to {value} (or less), or remove it"
    return set_fix(key, value)
