"""The `config:` block of Pulumi.yaml, derived from the typed model.

Pulumi.yaml must declare every key with type, description and default so that `pulumi config`
and the Pulumi Cloud console show them; a test keeps the file equal to what this returns.
"""

from __future__ import annotations

from typing import Any, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from infra.config.model import StackSettings

# Pulumi's project-config types (sdk/go/common/workspace/project.go): string, integer, boolean,
# array and object. Objects are validated as maps only; the program validates their fields.
_SECRET_DECLARATIONS = {
    "hfToken": {
        "type": "string",
        "secret": True,
        "default": "",
        "description": "Hugging Face token for gated models (Llama). Set it with "
        "`pulumi config set --secret hyperpod-dpd:hfToken hf_...`; empty: no token.",
    }
}


def _pulumi_type(field: FieldInfo) -> str:
    annotation = field.annotation
    if get_origin(annotation) is dict or (
        isinstance(annotation, type) and issubclass(annotation, BaseModel)
    ):
        return "object"
    return "string"


def project_config_block() -> dict[str, Any]:
    block: dict[str, Any] = {}
    for name, field in StackSettings.model_fields.items():
        if name == "region":
            continue  # aws:region belongs to the aws provider; each stack file sets it
        entry: dict[str, Any] = {
            "type": _pulumi_type(field),
            "description": field.description,
        }
        if not field.is_required():
            default = field.get_default(call_default_factory=True)
            entry["default"] = (
                default.model_dump(by_alias=True, mode="json", exclude_none=True)
                if isinstance(default, BaseModel)
                else default
            )
        block[field.alias or name] = entry
    block.update(_SECRET_DECLARATIONS)
    return block


def render_pulumi_yaml(current: str) -> str:
    """`current` (a Pulumi.yaml) with its trailing `config:` block regenerated from the model."""
    import yaml

    head, sep, _ = current.partition("\nconfig:\n")
    if not sep:
        raise ValueError("Pulumi.yaml has no top-level 'config:' block to regenerate")
    body = yaml.safe_dump({"config": project_config_block()}, sort_keys=False, width=100)
    return head + "\n" + body
