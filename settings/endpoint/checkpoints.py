"""The endpoints' own checkpoints (endpoints.<key>.checkpoint): each valid where it is set, each
staged copy under a prefix of its own, each endpoint's model the one its checkpoint stages, and
one model per staged copy."""

from __future__ import annotations

from core.problems import ConfigProblem
from core.sizing.catalog import MODELS, SizingError, load_model
from core.sizing.kv_cache import DOCS_MAX_MODEL_LEN
from settings.checkpoint import HF_SOURCE, CheckpointConfig, check_checkpoint, own_checkpoint
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


def check_model_matches_checkpoint(
    entry: EndpointEntry, c: CheckpointConfig
) -> list[ConfigProblem]:
    """The model the sizing and policies assume is the model the checkpoint stages, and vLLM
    will start with each pool's --max-model-len (named where it was given)."""
    e = entry.config
    try:
        model = load_model(e.model)
    except SizingError:
        return []  # reported by check_sizing_inputs
    problems = []
    model_key = entry.config_key("model")
    source_key = (
        entry.config_key("checkpoint", "source")
        if entry.config.checkpoint is not None
        else "hyperpod-dpd:checkpoint.source"
    )
    if HF_SOURCE.match(c.source) and e.model in MODELS:
        repo = c.source.removeprefix("hf://")
        if repo.lower() not in {r.lower() for r in model.repositories}:
            by_repo = [
                m.name for m in MODELS.values() if repo.lower() in map(str.lower, m.repositories)
            ]
            fix = (
                set_fix(model_key, by_repo[0])
                if by_repo
                else f"point {model_key} at the staged model's config.json (the sizing needs its "
                "architecture)"
            )
            problems.append(
                ConfigProblem(
                    model_key,
                    e.model,
                    f"the model {source_key} stages ({repo}); {e.model} is "
                    f"{', '.join(model.repositories)}",
                    fix,
                )
            )
    lengths = {p.max_model_len.where: p.max_model_len for p in entry.numbers.pools.values()}
    for max_len in lengths.values():
        if model.context_length and max_len.value > model.context_length:
            problems.append(
                ConfigProblem(
                    max_len.key,
                    max_len.shown,
                    f"at most {model.context_length}, {model.name}'s context length (vLLM "
                    "refuses a longer --max-model-len)",
                    max_len.set_to(min(DOCS_MAX_MODEL_LEN, model.context_length)),
                )
            )
    return problems


def check_one_model(
    listed: list[EndpointEntry], prefixes: list[str], reported: set[str]
) -> list[ConfigProblem]:
    """One staged copy, one model: the endpoints that load the same checkpoint (the same
    modelLocation, specs/endpoint.py) run the same weights, so one sized for another model than
    the first's would run them with numbers (heads, layers, KV cache) that are not theirs. Each
    one that differs names the first's key (unless a checkpoint check has named its model or
    checkpoint keys already: `reported`). Endpoints with checkpoints of their own
    (endpoints.<key>.checkpoint) may serve other models."""
    firsts: dict[str, EndpointEntry] = {}
    problems = []
    for entry, prefix in zip(listed, prefixes, strict=True):  # each staged under its prefix
        first = firsts.setdefault(prefix, entry)
        key, theirs = entry.config_key("model"), first.config_key("model")
        if entry.config.model == first.config.model or key in reported:
            continue
        if any(k.startswith(entry.config_key("checkpoint")) for k in reported):
            continue
        own = entry.config_key("checkpoint", "source")
        problems.append(
            ConfigProblem(
                key,
                entry.config.model,
                f"the model of {theirs} ({first.config.model}): both load the checkpoint staged "
                f"under {prefix} from the same modelLocation",
                f"{set_fix(key, first.config.model)}, or give the endpoint the checkpoint of its "
                f"own model: {set_fix(own)}",
            )
        )
    return problems
