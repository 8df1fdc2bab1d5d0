"""Pulumi.yaml declares every key, with the model's types, descriptions and defaults."""

from __future__ import annotations

from typing import Annotated

import yaml
from pydantic import TypeAdapter

from settings.declare import project_config_block, render_pulumi_yaml
from settings.stack import OBJECT_KEYS, StackSettings
from tests.conftest import ROOT


def pulumi_yaml() -> dict:
    return yaml.safe_load((ROOT / "Pulumi.yaml").read_text())


def test_project_file_runtime_is_pip_in_dot_venv():
    doc = pulumi_yaml()
    assert doc["name"] == "hyperpod-dpd"
    assert doc["runtime"] == {
        "name": "python",
        "options": {"toolchain": "pip", "virtualenv": ".venv"},
    }


def test_every_key_is_declared_with_type_and_description():
    declared = pulumi_yaml()["config"]
    model_keys = {f.alias for f in StackSettings.model_fields.values()} - {"region"}
    assert set(declared) == model_keys
    for key, decl in declared.items():
        assert decl["type"] in {"string", "boolean", "object", "array"}, key
        assert decl["description"], key
        # A list arrives as JSON text, as an object does (settings/parse.py decodes both).
        assert (decl["type"] in ("object", "array")) == (key in OBJECT_KEYS), key


def test_declarations_equal_the_model():
    assert pulumi_yaml()["config"] == project_config_block()
    text = (ROOT / "Pulumi.yaml").read_text()
    assert render_pulumi_yaml(text) == text


def test_declared_defaults_validate_against_the_model():
    declared = pulumi_yaml()["config"]
    for key, decl in declared.items():
        if "default" in decl and decl["type"] in ("object", "array"):
            field = next(f for f in StackSettings.model_fields.values() if f.alias == key)
            # With the field's validators (an optional model reads {} as unset).
            annotated = (
                Annotated[(field.annotation, *field.metadata)]
                if field.metadata
                else field.annotation
            )
            declared_default = TypeAdapter(annotated).validate_python(decl["default"])
            assert declared_default == field.get_default(call_default_factory=True)


def test_the_secret_token_is_not_declared():
    # Declared secret with a default, the CLI refuses every stack that does not set it; declared
    # without one, it requires it in every stack (tests/test_project_config.py has the rules).
    assert "hfToken" not in pulumi_yaml()["config"]


def test_the_configuration_table_is_generated_from_the_model():
    from settings.declare import config_reference, render_readme

    text = (ROOT / "docs" / "configuration.md").read_text()
    assert config_reference() in text
    assert render_readme(text) == text
    for key in ("instanceGroups.<name>.instanceType", "endpoint.pdBufferSize", "hfToken"):
        assert f"| `{key}` |" in text
    # endpoints.<name> takes endpoint's keys: said once, not every row again.
    assert "| `endpoints.<name>.*` | as `endpoint.*` |" in text
    assert "`endpoints.<name>.pdBufferSize`" not in text
