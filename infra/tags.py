"""Tags every AWS resource of the stack carries (cost allocation, ownership)."""

from __future__ import annotations


def base_tags(project: str, stack: str) -> dict[str, str]:
    return {"hyperpod-dpd:project": project, "hyperpod-dpd:stack": stack, "managed-by": "pulumi"}
