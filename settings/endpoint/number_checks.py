"""The checks of each pool's effective numbers (settings/endpoint/numbers.py), wherever they were given:
the overrides refused, TP x PP x DP against one node's GPUs, the batch against the step budget,
a long-prefill threshold a prompt can reach. What one step needs of the GPU is
settings/endpoint/sizing.py's (check_step_budget)."""

from __future__ import annotations

import math

from core.problems import ConfigProblem
from core.sizing.gpu_types import gpu_spec
from core.vllm.vllm_flags import default_batched_tokens, vllm_version
from core.vocabulary import PROJECT
from settings.cluster.groups import InstanceGroups
from settings.config.errors import set_fix
from settings.endpoint.entries import EndpointEntry, placement
from settings.endpoint.numbers import Given, PoolNumbers

PARALLEL = ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size")


def check_numbers(entry: EndpointEntry, groups: InstanceGroups, alone: bool) -> list[ConfigProblem]:
    """The roles' args vLLM cannot read and the overrides their typed keys would refuse; then
    each pool's parallel sizes against its node's GPUs and its batch against its step budget."""
    numbers = entry.numbers
    if numbers.problems:
        return list(numbers.problems)
    problems = []
    for pool in numbers.pools.values():
        problems += _check_parallel(entry, pool, groups, alone)
        problems += _check_batch(entry, pool)
        problems += _check_default_budget(entry, pool, groups, alone)
    return problems + _check_colocated_budget(entry) + _check_long_prefill(entry)


def _check_parallel(
    entry: EndpointEntry, pool: PoolNumbers, groups: InstanceGroups, alone: bool
) -> list[ConfigProblem]:
    """TP x PP x DP GPUs per worker (vLLM's world size); a worker owns one node."""
    sizes = [getattr(pool, name) for name in PARALLEL]
    given = [g for g in sizes if g.source == "args"]
    if not given:
        return []  # the settings' own TP: the sizing and the TP policy judge it
    types = {groups[n].instance_type for n in placement(entry, pool.pool, groups, alone)}
    known = sorted((spec.gpu_count, t) for t in types if (spec := gpu_spec(t)) is not None)
    world = math.prod(g.value for g in sizes)
    if not known or world <= known[0][0]:
        return []
    gpus, itype = known[0]
    tp, pp, dp = (g.value for g in sizes)
    key = given[0].key
    return [ConfigProblem(
        key, " ".join(str(g.shown) for g in given),
        f"TP x PP x DP ({tp} x {pp} x {dp} = {world}) at most the {gpus} GPUs of one "
        f"{itype}: each {pool.pool} worker is one pod on one node",
        _parallel_fix(given, sizes, gpus, key),
    )]  # fmt: skip


def _parallel_fix(given: list[Given], sizes: list[Given], gpus: int, key: str) -> str:
    """Lower the last parallel size given to what fits beside the others, when one does."""
    last = given[-1]
    others = math.prod(g.value for g in sizes if g is not last)
    fits = gpus // others
    more = "(more workers: raise replicas instead)"
    if fits >= 1:
        return f"{last.set_to(fits)} so that TP x PP x DP is at most {gpus} {more}"
    flags = ", ".join(str(g.flag) for g in given)
    return f"lower {flags} in {key} so that their product is {gpus} or less {more}"


def _check_batch(entry: EndpointEntry, pool: PoolNumbers) -> list[ConfigProblem]:
    """vLLM refuses a batch (--max-num-seqs) larger than its step budget."""
    seqs, budget = pool.max_num_seqs, pool.max_num_batched_tokens
    if budget is None or seqs.value <= budget.value:
        return []
    if seqs.source != "args" and budget.source != "args":
        return []  # typed values on both sides: settings/endpoint/worker_inputs.py check_colocated's
    role = "decode" if pool.pool == "colocated" else pool.pool
    key = entry.config_key(role, "args")
    where = budget.flag or budget.key
    return [ConfigProblem(
        key, f"--max-num-seqs {seqs.value}",
        f"--max-num-seqs at most the step budget {where} ({budget.value}): vLLM refuses a batch "
        "larger than the tokens of one step",
        f"{seqs.set_to(budget.value)}, or raise {where}"
        if seqs.source == "args"
        else f"{budget.set_to(seqs.value)}, or lower {seqs.key}",
    )]  # fmt: skip


# Flags that change vLLM's default step budget (EngineArgs._set_default_max_num_seqs_and_
# batched_tokens_args): without chunked prefill it is at least --max-model-len, in throughput
# mode twice the default. With either in a role's args the default is not judged here.
_BUDGET_CHANGERS = ("--enable-chunked-prefill", "--no-enable-chunked-prefill", "--performance-mode")


def _check_default_budget(
    entry: EndpointEntry, pool: PoolNumbers, groups: InstanceGroups, alone: bool
) -> list[ConfigProblem]:
    """A --max-num-seqs (maxNumSeqs) within vLLM's default step budget when none is set: vLLM
    refuses at start-up a max_num_seqs greater than max_num_batched_tokens
    (vllm/config/scheduler.py), and `vllm serve`'s default is the pinned vLLM's for the pool's
    GPU (core/vllm/vllm_flags.py default_batched_tokens: 8192 on H100/H200, 2048 on smaller GPUs and
    A100), judged on the pool's type with the smallest."""
    seqs = pool.max_num_seqs
    if pool.max_num_batched_tokens is not None:
        return []  # a budget given: _check_batch / _check_colocated_budget judge it
    role = "decode" if pool.pool == "colocated" else pool.pool
    args = getattr(entry.config, role).args
    if any(str(a).split("=", 1)[0] in _BUDGET_CHANGERS for a in args):
        return []
    specs = [gpu_spec(groups[n].instance_type) for n in placement(entry, pool.pool, groups, alone)]
    budgets = sorted(
        (default_batched_tokens(s.gpu_memory_mib, s.gpu_model), s.name) for s in specs if s
    )
    if not budgets or seqs.value <= budgets[0][0]:
        return []
    budget, itype = budgets[0]
    return [ConfigProblem(
        seqs.key, seqs.shown,
        f"at most {budget}, the step budget (--max-num-batched-tokens) vLLM {vllm_version()} "
        f"defaults to on {itype}'s GPUs when none is set: vLLM refuses at start-up a "
        "max_num_seqs greater than max_num_batched_tokens",
        f"{seqs.set_to(budget)}, or set --max-num-batched-tokens to {seqs.value} or more in "
        f"{entry.config_key(role, 'args')}",
    )]  # fmt: skip


def _check_colocated_budget(entry: EndpointEntry) -> list[ConfigProblem]:
    """endpoint.colocated.maxNumBatchedTokens at least the batch the colocated worker runs, the
    decoder's --max-num-seqs wherever it is given (vllm/config/scheduler.py,
    verify_max_model_len: "max_num_batched_tokens must be greater than or equal to
    max_num_seqs"). Judged in dpd mode too: one stack file gives all three benchmark runs."""
    budget = entry.config.colocated.max_num_batched_tokens
    seqs = entry.numbers.of_role("decode").max_num_seqs
    if budget is None or budget >= seqs.value:
        return []
    if entry.config.mode == "colocated" and seqs.source == "args":
        return []  # _check_batch names the args that set the batch
    key = entry.config_key("colocated", "maxNumBatchedTokens")
    return [ConfigProblem(
        key, budget,
        f"at least {seqs.where.replace(PROJECT + ':', '')} ({seqs.value}): vLLM refuses a step "
        "budget smaller than its batch",
        f"set {key} to {max(seqs.value, 2048)} or more (2048 is vLLM's usual chunked-prefill "
        "budget)",
    )]  # fmt: skip


def _check_long_prefill(entry: EndpointEntry) -> list[ConfigProblem]:
    """A long-prefill threshold a prompt can reach: at most the decoder's (the colocated
    worker's) max-model-len."""
    threshold = entry.config.colocated.long_prefill_token_threshold
    max_len = entry.numbers.of_role("decode").max_model_len
    if threshold is None or threshold <= max_len.value:
        return []
    key = entry.config_key("colocated", "longPrefillTokenThreshold")
    named = max_len.where if max_len.overridden else max_len.key.rsplit(".", 1)[-1]
    return [ConfigProblem(
        key, threshold,
        f"at most {named} ({max_len.value}): no prompt is longer, so no prefill would ever "
        "count as long",
        set_fix(key, max_len.value // 4),
    )]  # fmt: skip
