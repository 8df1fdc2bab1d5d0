"""The endpoints of a stack at a glance, for summary.md and the plan's text: each one's mode,
groups, GPUs at its minimum and maximum replicas, its share of the hourly cost, its traffic."""

from __future__ import annotations

from hyperpod_dpd.shared.cost import price_table
from hyperpod_dpd.shared.endpoints import pool_nodes
from settings import StackSettings
from settings.endpoint.entries import EndpointEntry, placement


def endpoint_rows(s: StackSettings) -> list[dict[str, str]]:
    """One row per endpoint, in key order (hourly: its nodes at minimum replicas)."""
    prices = price_table(s)
    rows = []
    for entry in s.entries():
        least, most = pool_nodes(s, entry, at="min"), pool_nodes(s, entry, at="max")
        gpus_min, gpus_max = sum(n.gpus for n in least), sum(n.gpus for n in most)
        hourly = sum(
            n.replicas * ((prices.get(n.instance_type or "") or {}).get("hourly") or 0.0)
            for n in least
        )
        groups = [g for pool in entry.pools() for g in _groups(s, entry, pool)]
        weight = s.traffic.get(entry.key or "")
        rows.append(
            {
                "endpoint": entry.label,
                "mode": entry.config.mode,
                "groups": ", ".join(dict.fromkeys(groups)) or "none",
                "gpus": f"{gpus_min}-{gpus_max}",
                "hourly": f"${hourly:,.2f}",
                "traffic": "-" if weight is None else f"{weight}%",
            }
        )
    return rows


def _groups(s: StackSettings, entry: EndpointEntry, pool: str) -> list[str]:
    return placement(entry, pool, s.instance_groups, len(s.entries()) == 1)


def endpoint_table(rows: list[dict[str, str]]) -> list[str]:
    """The rows as a markdown table (summary.md and the pull request comment)."""
    lines = ["| endpoint | mode | groups | GPUs (min-max) | hourly, nodes at min | traffic |"]
    lines += ["|---|---|---|---|---|---|"]
    lines += [
        f"| {r['endpoint']} | {r['mode']} | {r['groups']} | {r['gpus']} | {r['hourly']} | "
        f"{r['traffic']} |"
        for r in rows
    ]
    return lines


def render_endpoints(s: StackSettings) -> list[str]:
    """summary.md's table of the endpoints (hourly: their nodes at minimum replicas)."""
    return ["", f"## Endpoints ({len(s.entries())})", "", *endpoint_table(endpoint_rows(s))]


def headline(s: StackSettings) -> str:
    """The plan's first line names the endpoint(s): 'endpoint NAME (mode)' or each key's."""
    listed = s.entries()
    if len(listed) == 1 and listed[0].key is None:
        e = listed[0].config
        return f"endpoint {e.name} ({e.mode})"
    shown = ", ".join(f"{x.key} ({x.config.mode}" + (
        f", {s.traffic[x.key]}%" if x.key in s.traffic else "") + ")" for x in listed)  # fmt: skip
    return f"endpoints {shown}"
