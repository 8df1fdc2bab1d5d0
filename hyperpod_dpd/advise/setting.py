"""What `advise` takes from a stack (or from the flags and the docs' defaults): the simulation
target, the memory a worker must fit, prices, the groups, the endpoint's key, mode and caches, each
pool's --max-num-seqs, the nodes an `endpoints` entry's pools may scale to, and the groups a
layout of it needs grown."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.exits import UsageProblem
from core.sizing.kv_cache import (
    DOCS_GPU_MEMORY_UTILIZATION,
    DOCS_MAX_MODEL_LEN,
    DOCS_PD_BUFFER_BYTES,
)
from hyperpod_dpd.advise.search import Layout, Memory
from hyperpod_dpd.advise.targets import Target, target

DEFAULT_MODEL, DEFAULT_INSTANCE = "llama-3.3-70b", "ml.p5.48xlarge"


@dataclass(frozen=True)
class Setting:
    """What advise takes from a stack (or the flags and the docs' defaults)."""

    target: Target
    memory: Memory
    hourly: float | None
    groups: dict[str, dict[str, Any]] | None
    endpoint_key: str | None
    context: int
    context_key: str
    stack_path: Path | None
    mode: str | None = None  # the stack's endpoint's mode (None: no stack)
    max_num_seqs: dict[str, int] | None = None  # prefill, decode, colocated
    room: dict[str, int] | None = None  # nodes per pool an `endpoints` entry may take
    caches: tuple[bool, bool] = (False, False)  # the endpoint's weights and image caches
    places: dict[str, list[str]] | None = None  # an `endpoints` entry's groups, per pool

    def grown(self, layout: Layout) -> dict[str, int]:
        """The groups an `endpoints` entry's `layout` needs more nodes of, and their new
        instanceCount: where a pool needs more than its groups leave it (`room`), the first of
        its groups, by the nodes it lacks; else the plan would refuse the written layout, its
        workers Pending (empty: it fits, or advise sizes the groups itself)."""
        if self.room is None or self.places is None or self.groups is None:
            return {}
        out: dict[str, int] = {}
        for pool, need in layout.pool_nodes.items():
            lacking, places = need - self.room.get(pool, 0), self.places.get(pool) or []
            if lacking > 0 and places:
                group = places[0]
                out[group] = out.get(group, self.groups[group]["instanceCount"]) + lacking
        return out

    @property
    def sequences(self) -> dict[str, int]:
        """Each pool's --max-num-seqs: the stack's, else the settings' defaults."""
        if self.max_num_seqs is not None:
            return self.max_num_seqs
        from settings.endpoint.roles import DecodeConfig, PrefillConfig

        prefill = PrefillConfig.model_fields["max_num_seqs"].default
        decode = DecodeConfig.model_fields["max_num_seqs"].default
        return {"prefill": prefill, "decode": decode, "colocated": decode}


def _from_stack(args: argparse.Namespace, project_dir: Path) -> Setting:
    from hyperpod_dpd.shared.cost import price_table
    from settings.stack_file import read_stack

    stack = read_stack(project_dir, args.stack)
    s = stack.settings
    listed = s.entries()
    if args.endpoint is None and len(listed) > 1:
        raise UsageProblem(f"--endpoint: stack {args.stack} has several endpoints "
                           f"({', '.join(e.label for e in listed)}); name one, e.g. --endpoint "
                           f"{listed[0].key}")  # fmt: skip
    chosen = [e for e in listed if args.endpoint in (None, e.key, e.label)]
    if not chosen:
        raise UsageProblem(f"--endpoint {args.endpoint}: not an endpoint of stack {args.stack} "
                           f"(it has {', '.join(e.label for e in listed)}); name one of them, e.g. "
                           f"--endpoint {listed[0].key or listed[0].label}")  # fmt: skip
    entry = chosen[0]
    e = entry.config
    # The numbers the endpoint runs with (settings/endpoint/numbers.py): the decoder's hold the PD
    # buffer; the shortest context of its pools bounds a request.
    decoder = entry.numbers.of_role("decode")
    context = min((p.max_model_len for p in entry.numbers.pools.values()), key=lambda g: g.value)
    gpu = s.gpu_groups
    instance_type = args.instance_type or (next(iter(gpu.values())).instance_type if gpu else "")
    source = "stack" if args.instance_type is None else "flag"
    t = target(instance_type, args.model or e.model, source if args.model is None else "flag")
    price = price_table(s).get(instance_type) or {}
    places = None if entry.key is None else _places(s, entry)
    return Setting(
        target=t,
        memory=Memory(
            decoder.gpu_memory_utilization.value,
            decoder.max_model_len.value,
            entry.numbers.pd_buffer.value,
        ),
        hourly=price.get("hourly"),
        groups={
            n: {"role": g.role, "instanceType": g.instance_type, "instanceCount": g.instance_count}
            for n, g in s.instance_groups.items()
        },
        endpoint_key=entry.key,
        context=context.value,
        context_key=context.where,
        stack_path=stack.file.path,
        mode=e.mode,
        max_num_seqs={
            "prefill": _sequences(entry, "prefill", e.prefill.max_num_seqs),
            "decode": _sequences(entry, "decode", e.decode.max_num_seqs),
            "colocated": _sequences(entry, "colocated", e.decode.max_num_seqs),
        },
        room=None if places is None else _room(s, entry, places),
        caches=(e.cache.weights, e.cache.image),
        places=places,
    )


def _sequences(entry: Any, pool: str, configured: int) -> int:
    """The pool's --max-num-seqs as it runs (its args over its key), or as configured where the
    endpoint runs the other mode (a colocated pool reads the decoder's keys)."""
    numbers = entry.numbers.pools.get(pool)
    return numbers.max_num_seqs.value if numbers is not None else configured


def _places(s: Any, entry: Any) -> dict[str, list[str]]:
    """The groups each pool of `entry` can run on."""
    from settings.endpoint.entries import placement

    alone = len(s.entries()) == 1
    return {pool: placement(entry, pool, s.instance_groups, alone)
            for pool in ("prefill", "decode", "colocated")}  # fmt: skip


def _room(s: Any, entry: Any, places: dict[str, list[str]]) -> dict[str, int]:
    """The nodes each pool of `entry` may scale to: those of the groups it can run on
    (`places`), less the maxima of the other endpoints' pools that can run only there."""
    from settings.endpoint.entries import placement

    listed, groups = s.entries(), s.instance_groups
    alone = len(listed) == 1
    room = {}
    for pool, where in places.items():
        mine = set(where)
        claimed = sum(
            other.replicas(p, at="max")
            for other in listed
            if other.key != entry.key
            for p in other.pools()
            if set(placement(other, p, groups, alone)) <= mine
            and placement(other, p, groups, alone)
        )
        room[pool] = max(0, sum(groups[n].instance_count for n in mine) - claimed)
    return room


def setting(args: argparse.Namespace, project_dir: Path) -> Setting:
    if args.stack is not None:
        return _from_stack(args, project_dir)
    if args.write:
        raise UsageProblem(
            "--write without --stack: there is no stack file to patch. Add --stack S."
        )
    from hyperpod_dpd.shared.cost import load_prices

    t = target(args.instance_type or DEFAULT_INSTANCE, args.model or DEFAULT_MODEL)
    price = load_prices().get(t.instance_type) or {}
    return Setting(
        target=t,
        memory=Memory(DOCS_GPU_MEMORY_UTILIZATION, DOCS_MAX_MODEL_LEN, DOCS_PD_BUFFER_BYTES),
        hourly=price.get("hourly"),
        groups=None,
        endpoint_key=None,
        context=t.model.context_length,
        context_key=f"the context of {t.model.name}",
        stack_path=None,
    )
