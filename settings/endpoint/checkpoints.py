"""The endpoints' own checkpoints (endpoints.<key>.checkpoint): each valid where it is set, and
each staged copy under a prefix of its own."""

from __future__ import annotations

from core.problems import ConfigProblem
from settings.checkpoint import CheckpointConfig, check_checkpoint, own_checkpoint
from settings.config.errors import full_key, set_fix
from settings.endpoint.entries import EndpointEntry


def check_endpoint_checkpoints(
    stack: CheckpointConfig, listed: list[EndpointEntry]
) -> list[ConfigProblem]:
    """Each endpoint's own checkpoint passes the stack checkpoint's checks (named by its own
    keys), and two copies of different sources or revisions never share a prefix: the second
    Job would overwrite the first's objects under a running endpoint."""
    problems: list[ConfigProblem] = []
    owners: dict[str, tuple[str, CheckpointConfig]] = {
        stack.effective_prefix: (full_key(("checkpoint", "prefix")), stack)
    }
    for entry in listed:
        c = own_checkpoint(stack, entry.config.checkpoint)
        if c is stack:
            continue
        path = (*entry.path, "checkpoint")
        own = check_checkpoint(c, path)
        problems += own
        if own:
            continue
        key, prior = owners.setdefault(c.effective_prefix, (full_key((*path, "prefix")), c))
        if (prior.source, prior.revision) != (c.source, c.revision):
            prefix_key = full_key((*path, "prefix"))
            fix_prefix = c.model_copy(update={"prefix": None}).effective_prefix
            if fix_prefix in owners:
                fix_prefix = f"{c.effective_prefix}-{(c.revision or 'copy')[:12]}"
            problems.append(
                ConfigProblem(
                    prefix_key,
                    c.effective_prefix,
                    f"a prefix no other checkpoint is staged under ({key} holds "
                    f"{prior.source}@{prior.revision} there)",
                    set_fix(prefix_key, fix_prefix),
                )
            )
    return problems
