"""What makes workers that cannot start fit their GPUs, when no --gpu-memory-utilization does:
the options the gpu-memory policy offers a stack and `hyperpod-dpd size` offers its flags.

Every option is one step: followed as written, every worker it is given starts (each is checked
with the same sizing, core/sizing/gpu_memory.py worker_fit, before it is offered). A change that
needs another beside it says both at once ("lower --max-model-len to 8192 and shrink
--pd-buffer to 2GiB and set --gpu-memory-utilization between 0.96 and 0.97"), never one whose
follow-up fails on the next; a TP is the smallest that works; a PD buffer is never shrunk below
one --max-model-len transfer (hyperpod-dpd-pd-buffer-capacity would refuse it). The workers
given are those the same settings govern (`size`: both roles, every flag applies to both), so
what fixes one does not break another. `Names` says each option in the caller's words (a stack
key, or a flag).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from core.sizing.catalog import GIB, INSTANCES, InstanceSpec, ModelSpec
from core.sizing.gpu_memory import Fit, weights_bytes_per_rank, worker_fit
from core.sizing.kv_cache import chunk_bytes, chunks_for_tokens, kv_bytes_per_token_per_rank
from core.sizing.report import tp_choices


@dataclass(frozen=True)
class Names:
    tensor_parallel_size: str  # "hyperpod-dpd:endpoint.tensorParallelSize" or "--tp"
    max_model_len: str
    instance_type: str
    pd_buffer_to: Callable[[int], str]  # whole-GiB bytes -> "<key> to 8GiB"
    gpu_memory_utilization: str = "--gpu-memory-utilization"


@dataclass(frozen=True)
class Setup:
    """The settings the workers share, each of which an option may change."""

    model: ModelSpec
    instance: InstanceSpec
    tp: int
    max_len: int
    buffer: int  # the decoder's PD buffer per GPU (0: none)
    utilization: float
    overhead: int
    shortest: int = 1  # no context below this (the prompts the endpoint is sized for)

    def fits(self, roles: Sequence[str]) -> list[Fit]:
        return [
            worker_fit(role, self.model, self.instance, self.tp, self.max_len,
                       self.buffer if role == "decode" else 0, self.overhead)
            for role in roles
        ]  # fmt: skip


def common_range(fits: Sequence[Fit]) -> tuple[float, float] | None:
    """The utilizations every one of `fits` starts with and leaves room beside (None: none)."""
    low, high = max(f.lowest for f in fits), min(f.highest for f in fits)
    return (low, high) if low <= high else None


def _step(setup: Setup, roles: Sequence[str], names: Names, edits: list[str]) -> str | None:
    """`edits` as one step when they make every role start: at the current utilization as they
    are, else with the utilization range that does (None: no utilization does)."""
    fits = setup.fits(roles)
    if all(f.holds(setup.utilization) and f.leaves_room(setup.utilization) for f in fits):
        return " and ".join(edits)
    shared = common_range(fits)
    if shared is None:
        return None
    return " and ".join([*edits, utilization_range(names.gpu_memory_utilization, *shared)])


def utilization_range(name: str, low: float, high: float) -> str:
    """'set U between 0.80 and 0.87', or 'set U to 0.88' when only one value works."""
    if f"{low:.2f}" == f"{high:.2f}":
        return f"set {name} to {low:.2f}"
    return f"set {name} between {low:.2f} and {high:.2f}"


def one_step_fixes(setup: Setup, roles: Sequence[str], names: Names) -> list[str]:
    """Each option that makes every role of `roles` start in one step, the least change first:
    the smallest TP, then the largest smaller PD buffer, then the longest shorter context (with
    the buffer it needs, when no buffer alone does)."""
    options = []
    for tp in tp_choices(setup.model, setup.instance):
        if tp <= setup.tp:
            continue
        step = _step(dataclasses.replace(setup, tp=tp), roles, names,
                     [f"raise {names.tensor_parallel_size} to {tp}"])  # fmt: skip
        if step:
            options.append(step)
            break
    buffer_alone = None
    if "decode" in roles and setup.buffer:
        buffer = _largest_buffer(setup, roles)
        if buffer is not None:
            buffer_alone = _step(dataclasses.replace(setup, buffer=buffer), roles, names,
                                 [f"shrink {names.pd_buffer_to(buffer)}"])  # fmt: skip
            options.append(buffer_alone)
    context = _shorter_context(setup, roles, names, with_buffer=buffer_alone is None)
    if context:
        options.append(context)
    return [o for o in dict.fromkeys(options) if o]


def _largest(low: int, high: int, works: Callable[[int], bool]) -> int | None:
    """The largest n in [low, high] for which `works` holds, `works` holding for every n below
    one that does (None: not even `low`)."""
    if high < low or not works(low):
        return None
    while low < high:
        mid = (low + high + 1) // 2
        if works(mid):
            low = mid
        else:
            high = mid - 1
    return low


def _largest_buffer(setup: Setup, roles: Sequence[str]) -> int | None:
    """The largest whole-GiB PD buffer below the current one at which some utilization holds
    every role, still holding one --max-model-len transfer (None: none). A smaller buffer only
    leaves the decoder more room, so the buffers that work are the ones up to some size."""
    floor = max(1, -(-_transfer(setup, setup.max_len) // GIB))
    top = (setup.buffer - 1) // GIB

    def works(gib: int) -> bool:
        return common_range(dataclasses.replace(setup, buffer=gib * GIB).fits(roles)) is not None

    gib = _largest(floor, top, works)
    return None if gib is None else gib * GIB


def _shorter_context(
    setup: Setup, roles: Sequence[str], names: Names, with_buffer: bool
) -> str | None:
    """The longest --max-model-len below the current one that works: at the current buffer,
    else (`with_buffer`) with the smallest whole-GiB buffer that holds one transfer of it, which
    leaves the decoder the most room (None: no length does)."""

    def buffer_for(length: int) -> int:
        if not with_buffer or "decode" not in roles or not setup.buffer:
            return setup.buffer
        return min(setup.buffer, max(1, -(-_transfer(setup, length) // GIB)) * GIB)

    def works(length: int) -> bool:
        buffer = buffer_for(length)
        if buffer and buffer < _transfer(setup, length):
            return False
        at = dataclasses.replace(setup, max_len=length, buffer=buffer)
        return common_range(at.fits(roles)) is not None

    if setup.shortest >= setup.max_len:
        return None
    length = _largest(setup.shortest, setup.max_len - 1, works)
    if length is None:
        return None
    rounded = length // 1024 * 1024
    length = rounded if rounded >= setup.shortest and works(rounded) else length
    buffer = buffer_for(length)
    edits = [f"lower {names.max_model_len} to {length}"]
    if buffer != setup.buffer:
        edits.append(f"shrink {names.pd_buffer_to(buffer)}")
    return _step(dataclasses.replace(setup, max_len=length, buffer=buffer), roles, names, edits)


def _transfer(setup: Setup, length: int) -> int:
    """Bytes of the PD buffer one `length`-token transfer takes, in whole LMCache chunks."""
    kv = kv_bytes_per_token_per_rank(setup.model, setup.tp)
    return chunks_for_tokens(length) * chunk_bytes(kv)


def unfit_advice(
    role: str,
    fit: Fit,
    model: ModelSpec,
    instance: InstanceSpec,
    tp: int,
    max_len: int,
    buffer: int,
    overhead: int,
    names: Names,
    utilization: float = 0.0,
    roles: Sequence[str] = (),
    shortest: int = 1,
) -> str:
    """The options that make `fit` (of `role`: not possible at any utilization) possible, for
    `role` and the `roles` the same settings govern; when even the weights do not fit, the
    instance types and the 8-bit checkpoint that would hold them."""
    governed = list(dict.fromkeys([role, *roles]))
    setup = Setup(model, instance, tp, max_len, buffer, utilization, overhead, shortest)
    options = one_step_fixes(setup, governed, names)
    weights = weights_bytes_per_rank(model, tp) / GIB
    if not options:
        return (
            f"the weights alone do not fit: {model.name} at TP {tp} is {weights:.1f} GiB per GPU "
            f"of {instance.gpu_model}'s {fit.gpu_memory_bytes / GIB:.1f} GiB, with "
            f"{fit.outside_bytes / GIB:.1f} GiB beside vLLM's share; no context length or "
            "utilization helps: "
            + _what_would(role, model, instance, buffer, overhead, max_len, names)
        )
    larger = [
        i.name
        for i in INSTANCES.values()
        if i.gpu_memory_bytes > instance.gpu_memory_bytes
        and worker_fit(role, model, i, i.gpu_count, max_len, buffer, overhead).possible
    ]
    if larger:
        options.append(f"use a larger-GPU instance type ({', '.join(larger)})")
    return (
        f"no --gpu-memory-utilization works ({fit.need_bytes / GIB:.1f} GiB needed inside vLLM's "
        f"share, {fit.outside_bytes / GIB:.1f} GiB beside it, of {fit.gpu_memory_bytes / GIB:.1f}"
        f" GiB): " + ", or ".join(options)
    )


def cannot_start(
    who: str,
    model: ModelSpec,
    instance: InstanceSpec,
    tp: int,
    max_len: int,
    utilization: float,
    fit: Fit,
) -> str:
    """'<who> cannot start: ... needs X GiB ... but --gpu-memory-utilization U gives vLLM Y GiB'
    (the advice follows it)."""
    return (
        f"{who} cannot start: {model.name} at TP {tp} needs {fit.need_bytes / GIB:.1f} "
        f"GiB per GPU for weights, activations and the KV cache of one {max_len}-token "
        f"sequence, but --gpu-memory-utilization {utilization:g} gives vLLM "
        f"{fit.share(utilization) / GIB:.1f} GiB of each {instance.gpu_model}'s "
        f"{fit.gpu_memory_bytes / GIB:.1f} GiB; "
    )


def _what_would(role, model, instance, buffer, overhead, max_len, names: Names) -> str:
    """The instance types (at TP = their GPUs) and the 8-bit checkpoint that would hold it."""
    fits = [
        f"{i.name} ({i.gpu_model}, {i.gpu_memory_bytes / GIB:.0f} GiB)"
        for i in INSTANCES.values()
        if i.gpu_memory_bytes > instance.gpu_memory_bytes
        and worker_fit(role, model, i, i.gpu_count, max_len, buffer, overhead).possible
    ]
    ways = []
    if fits:
        ways.append(f"set {names.instance_type} to one with more memory per GPU: {', '.join(fits)}")
    if model.bytes_per_element > 1:
        fp8 = dataclasses.replace(model, bytes_per_element=1)
        at = instance.gpu_count
        if worker_fit(role, fp8, instance, at, max_len, buffer, overhead).possible:
            ways.append(f"stage an FP8 checkpoint of {model.name} (half the weights) at TP {at}")
    return ", or ".join(ways) or "serve a smaller model: none of the catalog's GPUs holds it"
