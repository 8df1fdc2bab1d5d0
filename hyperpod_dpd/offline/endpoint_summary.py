"""The endpoints of a stack at a glance, for summary.md and the plan's text: each one's mode,
groups, GPUs at its minimum and maximum replicas, its share of the hourly cost, its traffic."""

from __future__ import annotations

from core.catalog import INSTANCES
from hyperpod_dpd.shared.cost import price_table
from settings import StackSettings
from settings.endpoints import EndpointEntry, placement, scaling_of

GPUS_PER_NODE = 8  # every DPD instance type (core/catalog.py); an unknown type counts as 8


def _pool_nodes(entry: EndpointEntry, pool: str) -> tuple[int, int]:
    """(least, most) replicas of a pool: each replica is one node."""
    scaling = scaling_of(entry.config, pool)
    fixed = entry.replicas(pool)
    if scaling is None:
        return fixed, fixed
    return scaling.min_replicas, entry.replicas(pool, at_most=True)


def endpoint_rows(s: StackSettings) -> list[dict[str, str]]:
    """One row per endpoint, in key order."""
    listed = s.entries()
    prices = price_table(s)
    rows = []
    for entry in listed:
        gpus_min = gpus_max = 0
        hourly = 0.0
        groups: list[str] = []
        for pool in entry.pools():
            where = placement(entry, pool, s.instance_groups, len(listed) == 1)
            groups += where
            kind = s.instance_groups[where[0]].instance_type if where else ""
            per_node = INSTANCES[kind].gpu_count if kind in INSTANCES else GPUS_PER_NODE
            least, most = _pool_nodes(entry, pool)
            gpus_min, gpus_max = gpus_min + least * per_node, gpus_max + most * per_node
            hourly += least * ((prices.get(kind) or {}).get("hourly") or 0.0)
        weight = s.traffic.get(entry.key or "")
        rows.append(
            {
                "endpoint": entry.label,
                "mode": entry.config.mode,
                "groups": ", ".join(dict.fromkeys(groups)) or "none",
                "gpus": f"{gpus_min}" if gpus_min == gpus_max else f"{gpus_min}-{gpus_max}",
                "hourly": f"${hourly:,.2f}",
                "traffic": "-" if weight is None else f"{weight}%",
            }
        )
    return rows


def render_endpoints(s: StackSettings) -> list[str]:
    """summary.md's table of the endpoints (hourly: their nodes at minimum replicas)."""
    lines = ["", f"## Endpoints ({len(s.entries())})", ""]
    lines += ["| endpoint | mode | groups | GPUs (min-max) | hourly, nodes at min | traffic |"]
    lines += ["|---|---|---|---|---|---|"]
    for r in endpoint_rows(s):
        lines.append(
            f"| {r['endpoint']} | {r['mode']} | {r['groups']} | {r['gpus']} | {r['hourly']} | "
            f"{r['traffic']} |"
        )
    return lines


def headline(s: StackSettings) -> str:
    """The plan's first line names the endpoint(s): 'endpoint NAME (mode)' or each key's."""
    listed = s.entries()
    if len(listed) == 1 and listed[0].key is None:
        e = listed[0].config
        return f"endpoint {e.name} ({e.mode})"
    shown = ", ".join(f"{x.key} ({x.config.mode}" + (
        f", {s.traffic[x.key]}%" if x.key in s.traffic else "") + ")" for x in listed)  # fmt: skip
    return f"endpoints {shown}"
