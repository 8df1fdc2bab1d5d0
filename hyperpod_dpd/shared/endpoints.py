"""Which endpoint of a stack a Day-2 command works on (`--endpoint KEY`), and what it runs on.

A stack has one `hyperpod-dpd:endpoint` or several `hyperpod-dpd:endpoints` keyed by name
(settings/endpoint/entries.py). `verify` and `benchmark run` take `--endpoint KEY`: needed with
several, optional with one (then only its name is accepted). Every refusal is a ConfigError
(exit 2) naming `--endpoint`, the value, the keys allowed and the fix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NoReturn

from core.problems import MISSING, ConfigError, ConfigProblem
from core.sizing.gpu_types import gpus_per_node
from settings.endpoint.entries import EndpointEntry
from specs.placement import placement_of

FLAG = "--endpoint"


def choose_endpoint(settings: Any, stack: str, key: str | None, flag: str = FLAG) -> EndpointEntry:
    """The entry of `stack` that `--endpoint key` names (None: the only one); `flag`: the flag
    that gave `key`, named by a refusal (canary's --baseline takes endpoints too)."""
    entries = settings.entries()
    if len(entries) == 1 and entries[0].key is None:
        (entry,) = entries
        if key is None or key == entry.config.name:
            return entry
        _refuse(
            flag,
            key,
            f"the name of stack {stack}'s one endpoint (hyperpod-dpd:endpoint), "
            f"{entry.config.name}, or no {flag} at all",
            f"give {flag} {entry.config.name} or leave {flag} out",
        )
    keys = [e.key for e in entries]
    listed = ", ".join(str(k) for k in keys)
    if key is None:
        _refuse(
            flag,
            MISSING,
            f"one of the keys of stack {stack}'s endpoints (hyperpod-dpd:endpoints: {listed})",
            f"say which one, e.g. {flag} {keys[0]}",
        )
    for entry in entries:
        if entry.key == key:
            return entry
    _refuse(
        flag,
        key,
        f"one of the keys of stack {stack}'s endpoints (hyperpod-dpd:endpoints: {listed})",
        f"give one of those keys, e.g. {flag} {keys[0]}",
    )


def _refuse(flag: str, value: Any, allowed: str, fix: str) -> NoReturn:
    raise ConfigError([ConfigProblem(flag, value, allowed, fix)], flag)


def single_view(settings: Any, entry: EndpointEntry) -> Any:
    """The stack's settings as if `entry` were its one `endpoint`: what code written for the
    single endpoint (the IEC builder, the benchmark runner's access) reads as `.endpoint`."""
    if entry.key is None:
        return settings
    return settings.with_endpoint(entry).model_copy(update={"endpoints": {}})


@dataclass(frozen=True)
class PoolNodes:
    """One worker pool of an endpoint: its replicas (one node each) and their instance type."""

    pool: str
    replicas: int
    instance_type: str | None  # None: no instance group of the pool's role

    @property
    def gpus_per_node(self) -> int:
        return gpus_per_node(self.instance_type)

    @property
    def gpus(self) -> int:
        return self.replicas * self.gpus_per_node


def pool_nodes(settings: Any, entry: EndpointEntry, at: str = "fixed") -> list[PoolNodes]:
    """The nodes `entry` runs (each worker owns a node), per pool: at its fixed replicas, or
    with `at` "min" / "max" at its autoscaler's bounds (fixed where it has none)."""
    # The instance type each pool is sized for, as the endpoint's IEC is built.
    kinds = placement_of(settings, entry).pool_types
    return [PoolNodes(pool, entry.replicas(pool, at), kinds.get(pool)) for pool in entry.pools()]


def gpus_and_hourly_cost(settings: Any, entry: EndpointEntry) -> tuple[int, float | None]:
    """The GPUs `entry` runs on at fixed replicas and what its tokens cost per hour: the whole
    stack's estimate for a stack's only endpoint; with several, its own nodes' (the shared
    cluster, NAT and system nodes would be counted once per endpoint). None: a price unknown."""
    from hyperpod_dpd.shared.cost import hourly_cost, price_table, total

    nodes = pool_nodes(settings, entry)
    gpus = sum(n.gpus for n in nodes)
    if entry.key is None:
        return gpus, round(total(hourly_cost(settings)), 2)
    table = price_table(settings)
    prices = [(table.get(n.instance_type or "") or {}).get("hourly") for n in nodes]
    if any(p is None for p in prices):
        return gpus, None
    return gpus, round(sum(p * n.replicas for p, n in zip(prices, nodes, strict=True)), 2)
