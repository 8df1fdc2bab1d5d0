"""The plan's resources as `terraform plan` and `pulumi preview` show them: one line per
resource with its action, grouped under the top-level component that made it, and the count of
each action after. An offline plan has no state to compare with, so every action is a create
(`+`), as on the first `pulumi up` of a new stack; what changes between two plans is `diff`'s."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from core.colour import PLAIN, Palette

CREATE = "+"
STACK_TYPE = "pulumi:pulumi:Stack"


def _short_type(urn: str) -> str:
    """The resource's own type from its URN's type chain (parent$child)."""
    return urn.split("::")[-2].rsplit("$", 1)[-1]


def group_by_component(resources: Iterable[Any]) -> list[tuple[str, list[Any]]]:
    """(heading, resources) per top-level component in the order the program made them;
    resources the stack itself holds (providers) come last under "stack"."""
    by_urn = {r.urn: r for r in resources}

    def top(r: Any) -> Any | None:
        while r.parent and r.parent in by_urn:
            r = by_urn[r.parent]
        return None if r.parent is None or STACK_TYPE not in r.parent else r

    groups: dict[str, list[Any]] = {}
    tops: dict[str, Any] = {}
    for r in by_urn.values():
        root = top(r)
        if root is not None and root is r and not r.custom:
            tops.setdefault(r.urn, r)
            groups.setdefault(r.urn, [])
            continue
        key = root.urn if root is not None and not root.custom else "stack"
        groups.setdefault(key, []).append(r)
    ordered = [(f"{_short_type(u)} {tops[u].name}", groups[u]) for u in groups if u in tops]
    if "stack" in groups:
        ordered.append(("stack", groups["stack"]))
    return ordered


def render_tree(resources: list[Any], indent: str = "  ", palette: Palette = PLAIN) -> list[str]:
    """The resources grouped by component, each line `+ name  type`, then the counts."""
    create = palette.green(CREATE)
    grouped = group_by_component(resources)
    width = min(max((len(r.name) for _, rs in grouped for r in rs), default=4), 36)
    lines: list[str] = []
    for heading, members in grouped:
        lines.append(f"{indent}{create} {heading}")
        for r in sorted(members, key=lambda r: r.name):
            lines.append(f"{indent}    {create} {r.name.ljust(width)}  {r.type}")
    components = sum(1 for r in resources if not r.custom)
    lines += [
        "",
        f"Plan: {len(resources)} to add ({len(resources) - components} resources, "
        f"{components} components), 0 to change, 0 to destroy.",
    ]
    return lines
