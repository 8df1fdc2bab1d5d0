"""The sizing of an endpoint's decoder on its instance type, from its effective numbers
(settings/endpoint/numbers.py): the numbers the plan's summary and the policies use, the check that the
model and TP are ones it can size, and the check that one engine step
(--max-num-batched-tokens) fits beside the weights and the KV cache."""

from __future__ import annotations

from core.problems import ConfigProblem
from core.sizing.catalog import GIB, INSTANCES, SizingError, load_model
from core.sizing.gpu_memory import StepBudget, step_budget
from core.sizing.gpu_types import gpu_spec
from core.sizing.kv_cache import assumed_prompt_tokens
from core.sizing.report import SizingReport, size, validate_tp
from core.vocabulary import PROJECT
from settings.cluster.groups import InstanceGroups, gpu_groups, groups_with_role, instance_type_for
from settings.config.errors import set_fix
from settings.endpoint.entries import EndpointEntry, placement
from settings.endpoint.model import EndpointConfig
from settings.endpoint.numbers import Given


def size_endpoint(entry: EndpointEntry, groups: InstanceGroups) -> SizingReport | None:
    """Size the endpoint's decoder (colocated: its one pool) on its instance type, at the numbers
    it runs with: a colocated one on any GPU type with EC2 numbers (core/sizing/gpu_types.py), a DPD one
    on the five DPD types only. None otherwise: DPD on another type is the instance-type
    policy's to refuse (a TP fix sized for it would mislead), a type without numbers
    settings/placement/gpu_groups.py's. SizingError on bad model/TP input."""
    e = entry.config
    if not gpu_groups(groups):
        return None  # config validation reports the missing GPU group
    decode_type = _decoder_type(e, groups)
    instance = gpu_spec(decode_type) if e.mode == "colocated" else INSTANCES.get(decode_type)
    if instance is None:
        return None
    numbers = entry.numbers
    decoder, prefill = numbers.of_role("decode"), numbers.of_role("prefill")
    max_len = decoder.max_model_len.value
    return size(
        load_model(e.model),
        instance,
        tp=decoder.tensor_parallel_size.value,
        prompt_tokens=e.expected_prompt_tokens or assumed_prompt_tokens(max_len),
        pd_buffer_bytes=numbers.pd_buffer.value,
        gpu_memory_utilization=decoder.gpu_memory_utilization.value,
        max_model_len=max_len,
        in_flight=e.expected_in_flight_transfers,
        prefill_gpu_memory_utilization=prefill.gpu_memory_utilization.value,
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


def check_sizing_inputs(entry: EndpointEntry, groups: InstanceGroups) -> list[ConfigProblem]:
    """The model must be known and TP must fit it and the node (see core/sizing/report.py), named
    where each number was given: the decoder's through its sizing, every other pool's TP on
    its own (check_pool_tp)."""
    try:
        size_endpoint(entry, groups)
        problems = check_pool_tp(entry, groups)
    except SizingError as exc:
        numbers = entry.numbers
        decoder = numbers.of_role("decode")
        given: Given | None = {
            "tp": decoder.tensor_parallel_size,
            "gpu_memory_utilization": decoder.gpu_memory_utilization,
            "max_model_len": decoder.max_model_len,
            "pd_buffer": numbers.pd_buffer,
        }.get(exc.field)
        if given is not None and given.flag and exc.field == "tp":
            spec = gpu_spec(_decoder_type(entry.config, groups))
            if spec is not None and given.value > spec.gpu_count:
                return []  # a world size beyond one node: settings/endpoint/number_checks.py names it
        if given is not None:
            fix = exc.fix
            if exc.suggestion is not None:
                fix = f"{exc.fix.rstrip('.')}: {given.set_to(exc.suggestion)}"
            return [ConfigProblem(given.key, given.shown, exc.problem, fix)]
        where = exc.key.replace("<group>", next(iter(groups_with_role(groups, "decode")), "decode"))
        if where.startswith("endpoint."):
            where = ".".join((*entry.path, where.removeprefix("endpoint.")))
        key = f"{PROJECT}:{where}"
        fix = (
            exc.fix
            if exc.suggestion is None
            else f"{exc.fix.rstrip('.')}: {set_fix(key, exc.suggestion)}"
        )
        return [ConfigProblem(key, exc.value, exc.problem, fix)]
    return problems


def check_pool_tp(entry: EndpointEntry, groups: InstanceGroups) -> list[ConfigProblem]:
    """Each pool's --tensor-parallel-size divides the model's attention heads and divides or is
    a multiple of its KV heads, as vLLM requires of every worker (core/sizing/report.py validate_tp):
    a DPD endpoint's prefill pool has its own TP (endpoints.<key>.prefill.tensorParallelSize or
    its args), which the decoder's sizing does not see. Judged on the pool's own groups (the
    type with the fewest GPUs); a TP beyond a node's GPUs given in args is
    settings/endpoint/number_checks.py's. Raises SizingError for an unknown model (the caller's)."""
    model = load_model(entry.config.model)
    problems = []
    for pool in entry.numbers.pools.values():
        if pool.pool in ("decode", "colocated"):
            continue  # the decoder: size_endpoint validates it
        tp = pool.tensor_parallel_size
        specs = [
            gpu_spec(groups[n].instance_type)
            for n in placement(entry, pool.pool, groups, alone=False)
        ]
        known = sorted(filter(None, specs), key=lambda i: i.gpu_count)
        if not known or (tp.flag and tp.value > known[0].gpu_count):
            continue
        try:
            validate_tp(model, known[0], tp.value)
        except SizingError as exc:
            fix = (
                exc.fix
                if exc.suggestion is None
                else f"{exc.fix.rstrip('.')}: {tp.set_to(exc.suggestion)}"
            )
            problems.append(
                ConfigProblem(
                    tp.key,
                    tp.shown,
                    f"{pool.pool} TP {exc.problem}",
                    fix,
                )
            )
    return problems


# The fix offered rounds the largest step budget that fits down to a multiple of this (vLLM's
# usual chunked-prefill budget), so the number is one a person would type.
BUDGET_STEP = 2048


def check_step_budget(
    entry: EndpointEntry, groups: InstanceGroups, alone: bool
) -> list[ConfigProblem]:
    """A --max-num-batched-tokens vLLM can start with: at startup it profiles one step of that
    many tokens and takes the peak out of its share before sizing the KV cache; if the KV cache
    of one --max-model-len sequence no longer fits, it refuses to start (core/sizing/gpu_memory.py).

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
    if entry.numbers.problems:
        return []  # settings/endpoint/number_checks.py reports them
    problems = []
    for pool in entry.numbers.pools.values():
        given = pool.max_num_batched_tokens
        if given is None:
            continue  # vLLM's default budget
        types = [groups[n].instance_type for n in placement(entry, pool.pool, groups, alone)]
        known = sorted(filter(None, map(gpu_spec, types)), key=_gpu_memory)
        if not known:
            continue  # no type with GPU numbers (settings/placement/gpu_groups.py)
        tokens, tp = given.value, pool.tensor_parallel_size.value
        utilization, max_len = pool.gpu_memory_utilization.value, pool.max_model_len.value
        role = "decode" if pool.pool == "colocated" else pool.pool
        budget = step_budget(model, known[0], tp, utilization, max_len, role)
        if budget.holds(tokens) or not budget.largest:
            # No budget at all: the worker cannot start whatever the budget, and the gpu-memory
            # policy says what would (a config problem here would stop the plan before it).
            continue
        problems.append(ConfigProblem(
            given.key, given.shown,
            _allowed(budget, tokens, known[0].name, model.name, tp, utilization, max_len),
            _fix(budget, given),
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


def _fix(b: StepBudget, given: Given) -> str:
    value = b.largest // BUDGET_STEP * BUDGET_STEP or b.largest
    if given.flag:
        return f"{given.set_to(value)} (or less), or remove it"
    return given.set_to(value)
