"""The stack-file patch that deploys a layout, and `--write`, which applies it keeping comments.

The patch is a JSON merge patch (RFC 7396) of the stack file's `config:` block, keyed as
`Pulumi.<stack>.yaml` is (`hyperpod-dpd:endpoint`, `hyperpod-dpd:instanceGroups`): a mapping
merges into the mapping there, a value replaces, null removes the key.

- A DPD layout: endpoint mode dpd, prefill/decode replicas and TP each; the stack's GPU groups
  become one prefill and one decode group with P and D nodes (the groups of those roles kept,
  with their settings, under their names; others removed).
- A colocated layout: endpoint mode colocated with `replicas` and `tensorParallelSize`; one GPU
  group of N nodes (a colocated group if there is one, else the decode group, else the prefill
  group; the rest removed).
- A stack of several endpoints (`endpoints`): that endpoint's keys; they share the groups, whose
  counts stay as they are unless the layout needs more nodes than they leave the endpoint: then
  the first group of each short pool grows by what it lacks (hyperpod_dpd/advise/setting.py
  `grown`), else the plan would refuse the written layout, its workers Pending.
- With the SLO's targets (hyperpod_dpd/advise/scaling.py): the endpoint's `autoscaling`, each pool
  with a target, the capacity advise recorded and the ratio; `write` puts a comment above it naming
  the workload and the SLO, replacing the one an earlier `--write` put there. The endpoint's
  `slo` is never touched.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any

from hyperpod_dpd.advise.search import Layout

PROJECT = "hyperpod-dpd"
GPU_ROLES = ("prefill", "decode", "colocated")


def endpoint_keys(layout: Layout) -> dict[str, Any]:
    """The endpoint's keys for `layout`: the decoder's TP is the endpoint's (the number every
    pool reads unless a role sets its own); a prefill TP only when it differs; several prefill
    replicas route round-robin (the routing-strategy policy's advice: prefix-aware routing
    concentrates load on one prefiller)."""
    if layout.mode == "colocated":
        return {
            "mode": "colocated",
            "replicas": layout.replicas,
            "tensorParallelSize": layout.tp,
            # Colocated workers run the endpoint's TP: per-role TPs would be DPD's only.
            "prefill": {"tensorParallelSize": None},
            "decode": {"tensorParallelSize": None},
        }
    keys: dict[str, Any] = {
        "mode": "dpd",
        "replicas": None,
        "tensorParallelSize": layout.decode_tp,
        "prefill": {
            "replicas": layout.replicas,
            "tensorParallelSize": layout.tp if layout.tp != layout.decode_tp else None,
        },
        "decode": {"replicas": layout.decode_replicas, "tensorParallelSize": None},
    }
    if layout.replicas > 1:
        keys["routingStrategy"] = "roundrobin"
    return keys


def group_keys(
    layout: Layout, groups: dict[str, dict[str, Any]], instance_type: str
) -> dict[str, Any]:
    """instanceGroups changes: `groups` are the stack's (name -> {instanceType, role, ...})."""
    gpu = {name: g for name, g in groups.items() if g.get("role") in GPU_ROLES}

    def named(role: str) -> str | None:
        return next((n for n in sorted(gpu) if gpu[n].get("role") == role), None)

    wanted: dict[str, tuple[str, int]] = {}  # group name -> (role, nodes)
    if layout.mode == "dpd":
        for role, nodes in (("prefill", layout.replicas), ("decode", layout.decode_replicas)):
            wanted[named(role) or role] = (role, nodes)
    else:
        name = named("colocated") or named("decode") or named("prefill") or "colocated"
        role = gpu[name]["role"] if name in gpu else "colocated"
        wanted[name] = (role, layout.replicas)
    patch: dict[str, Any] = {name: None for name in gpu if name not in wanted}
    for name, (role, nodes) in wanted.items():
        if name in gpu:
            patch[name] = {"instanceCount": nodes}
        else:
            patch[name] = {"instanceType": instance_type, "instanceCount": nodes, "role": role}
    return patch


def config_patch(
    layout: Layout,
    instance_type: str,
    groups: dict[str, dict[str, Any]] | None,
    endpoint_key: str | None,
    autoscaling: dict[str, Any] | None = None,
    grown: dict[str, int] | None = None,
) -> dict[str, Any]:
    """The patch deploying `layout`. `groups`: the stack's instanceGroups (None: no stack, the
    patch then creates the GPU groups); `endpoint_key`: the endpoint's key in `endpoints`
    (None: the single `endpoint`); `autoscaling`: the endpoint's autoscaling keys (None: left
    as they are); `grown`: an `endpoints` entry's groups to grow, and their instanceCount."""
    keys = endpoint_keys(layout)
    if autoscaling is not None:
        keys["autoscaling"] = autoscaling
    if endpoint_key is not None:
        out: dict[str, Any] = {f"{PROJECT}:endpoints": {endpoint_key: keys}}
        if grown:
            out[f"{PROJECT}:instanceGroups"] = {g: {"instanceCount": n} for g, n in grown.items()}
        return out
    return {
        f"{PROJECT}:instanceGroups": group_keys(layout, groups or {}, instance_type),
        f"{PROJECT}:endpoint": keys,
    }


def changes(patch: Any, current: Any) -> Any:
    """`patch` without what would not change `current` (the stack's config block): a key set to
    the value it has, a key removed that is not there, a mapping left with nothing to change.
    The patch then says only what the layout changes."""
    if not isinstance(patch, dict):
        return patch
    if not isinstance(current, dict):
        current = {}  # nothing there: nothing to remove, every other key new
    out: dict[str, Any] = {}
    for key, value in patch.items():
        if value is None:
            if key in current:
                out[key] = None
        elif isinstance(value, dict):
            inner = changes(value, current.get(key))
            if inner or (key in current and not isinstance(current[key], dict)):
                out[key] = inner
        elif key not in current or current[key] != value:
            out[key] = value
    return out


def merge(target: Any, patch: Any) -> Any:
    """RFC 7396 merge of `patch` into `target` (a mapping changed in place, so a ruamel.yaml
    CommentedMap keeps its comments and order); returns the result."""
    if not isinstance(patch, dict):
        return patch
    if not isinstance(target, dict):
        target = {}
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict):
            target[key] = merge(target.get(key), value)
        else:
            target[key] = value
    return target


COMMENT_START = "Targets from `hyperpod-dpd advise`"
# An earlier --write's comment: its lines, right above an `autoscaling:` key at their indent.
_OLD_COMMENT = re.compile(
    rf"^( *)# {re.escape(COMMENT_START)}.*\n(?:\1# .*\n)*(?=\1autoscaling:)", re.MULTILINE
)


def endpoint_path(endpoint_key: str | None) -> tuple[str, ...]:
    """Where the endpoint's keys are in the `config:` block."""
    if endpoint_key is None:
        return (f"{PROJECT}:endpoint",)
    return (f"{PROJECT}:endpoints", endpoint_key)


def write(
    path: Path, patch: dict[str, Any], comment: tuple[tuple[str, ...], str] | None = None
) -> None:
    """Apply `patch` to the `config:` block of the stack file at `path`, keeping its comments,
    key order and quoting; `comment`: (the endpoint's path in `config:`, the text) to put above
    its `autoscaling` key, in place of an earlier one."""
    from ruamel.yaml import YAML

    yaml = YAML()  # round-trip: comments, order and flow style survive
    yaml.preserve_quotes = True
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)  # the stack files' "  - item" under a key
    text = path.read_text()
    if comment is not None:
        text = _OLD_COMMENT.sub("", text)
    document = yaml.load(text)
    config = document.setdefault("config", {})
    merge(config, patch)
    if comment is not None:
        where, words = comment
        endpoint = config
        for key in where:
            endpoint = endpoint[key]
        if "autoscaling" in endpoint:
            indent = 2 * (len(where) + 1)  # config: 0, its keys 2, the endpoint's keys 4...
            lines = textwrap.wrap(f"{COMMENT_START} {words}", 100 - indent - 2)
            endpoint.yaml_set_comment_before_after_key(
                "autoscaling", before="\n".join(lines), indent=indent
            )
    with path.open("w") as out:
        yaml.dump(document, out)
