"""The `config:` block of Pulumi.yaml, derived from the typed model.

Pulumi.yaml must declare every key with type, description and default so that `pulumi config`
and the Pulumi Cloud console show them; a test keeps the file equal to what this returns.
"""

from __future__ import annotations

import json
from types import UnionType
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from settings.stack import StackSettings

# Pulumi's project-config types (sdk/go/common/workspace/project.go): string, integer, boolean,
# array and object. Objects are validated as maps only; the program validates their fields.
#
# Secret keys are not declared in Pulumi.yaml. The CLI (pkg/workspace/config.go, mergeConfig and
# validateStackConfigValue) applies a declared default as a *plaintext* value and then refuses it
# because the key is secret (pulumi/pulumi#21865); without a default the key would be required in
# every stack. Undeclared, `pulumi config set --secret` works and the program refuses a plaintext
# value itself (settings/parse.py).
SECRET_KEYS_HELP = {
    "hfToken": "Hugging Face token for gated models (Llama), a Pulumi secret: `pulumi config set "
    "--secret hyperpod-dpd:hfToken hf_...`. Not declared in Pulumi.yaml (the CLI cannot declare "
    "an optional secret); unset: no token.",
}


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The model of a model field, or of an optional one (`SloConfig | None`)."""
    if get_origin(annotation) in (UnionType, Union):
        models = [a for a in get_args(annotation) if _model_of(a)]
        return models[0] if len(models) == 1 else None
    return (
        annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None
    )


def _pulumi_type(field: FieldInfo) -> str:
    annotation = field.annotation
    if get_origin(annotation) is dict or _model_of(annotation):
        return "object"
    if get_origin(annotation) is list:  # of strings: the CLI wants the items' type declared
        return "array"
    return {bool: "boolean", int: "integer"}.get(annotation, "string")


def project_config_block() -> dict[str, Any]:
    block: dict[str, Any] = {}
    for name, field in StackSettings.model_fields.items():
        if name == "region":
            continue  # aws:region belongs to the aws provider; each stack file sets it
        entry: dict[str, Any] = {
            "type": _pulumi_type(field),
            "description": field.description,
        }
        if entry["type"] == "array":
            entry["items"] = {"type": "string"}
        if not field.is_required():
            default = field.get_default(call_default_factory=True)
            if isinstance(default, BaseModel):
                default = default.model_dump(by_alias=True, mode="json", exclude_none=True)
            elif default is None and entry["type"] == "object":
                default = {}  # an optional model: {} reads as unset (settings/endpoint/slo.py OptionalSlo)
            entry["default"] = default
        block[field.alias or name] = entry
    return block


def render_pulumi_yaml(current: str) -> str:
    """`current` (a Pulumi.yaml) with its trailing `config:` block regenerated from the model."""
    import yaml

    head, sep, _ = current.partition("\nconfig:\n")
    if not sep:
        raise ValueError("Pulumi.yaml has no top-level 'config:' block to regenerate")
    body = yaml.safe_dump({"config": project_config_block()}, sort_keys=False, width=100)
    return head + "\n" + body


def config_reference() -> str:
    """docs/configuration.md's table: every key and sub-key, its default and meaning."""
    rows = ["| key | default | meaning |", "|---|---|---|"]
    rows.append("| `aws:region` | (required) | Region of the cluster and the model bucket. |")
    rows += _rows("", StackSettings, {})
    rows += [f"| `{key}` | (none) | {text} |" for key, text in SECRET_KEYS_HELP.items()]
    return "\n".join(rows) + "\n"


def _rows(prefix: str, model: type[BaseModel], listed: dict[type, str]) -> list[str]:
    """The rows of `model`'s keys under `prefix`. A model listed already (`listed`: model -> the
    key it was listed under) is not listed again key by key: `endpoints.<name>` takes every key
    of `endpoint`, said in one row that points there."""
    if model in listed:
        return [
            f"| `{prefix}*` | as `{listed[model]}.*` | Every key of `{listed[model]}` above, with "
            "its meaning and default. |"
        ]
    if prefix:
        listed[model] = prefix.rstrip(".")
    rows = []
    for name, f in model.model_fields.items():
        if name == "region" and not prefix:
            continue
        key = f"{prefix}{f.alias or name}"
        annotation = f.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            rows += _rows(f"{key}.", annotation, listed)
            continue
        if (optional := _model_of(annotation)) is not None:
            rows.append(f"| `{key}` | (none) | {f.description} |")
            rows += _rows(f"{key}.", optional, listed)
            continue
        if get_origin(annotation) is dict:
            value_type = get_args(annotation)[1]
            if isinstance(value_type, type) and issubclass(value_type, BaseModel):
                rows.append(f"| `{key}` | (required) | {f.description} |")
                rows += _rows(f"{key}.<name>.", value_type, listed)
                continue
        if f.is_required():
            default = "(required)"
        else:
            value = f.get_default(call_default_factory=True)
            default = "(none)" if value is None else f"`{json.dumps(value)}`"
        description = (f.description or "").replace("|", "\\\\|")
        rows.append(f"| `{key}` | {default} | {description} |")
    return rows


README_START = "<!-- config-reference:start (generated: make pulumi-yaml) -->"
README_END = "<!-- config-reference:end -->"


def render_readme(current: str) -> str:
    """`current` (docs/configuration.md) with the table between the markers regenerated."""
    head, start, rest = current.partition(README_START)
    _, end, tail = rest.partition(README_END)
    if not (start and end):
        raise ValueError("docs/configuration.md lacks the config-reference markers")
    return f"{head}{README_START}\n{config_reference()}{README_END}{tail}"
