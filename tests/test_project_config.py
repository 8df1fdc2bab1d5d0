"""Pulumi.yaml and every Pulumi.<stack>.yaml against the rules the Pulumi CLI applies before a
`pulumi preview` runs the program. No CLI here, so the rules are re-stated from its source
(pulumi/pulumi at 1b5949891b3c, 2026-08-21; each check names the function):

- sdk/go/common/workspace/project.go `Project.Validate`: no key with both `default` and
  `value`; a typed array declares `items`; a typed key's default has that type; keys of other
  namespaces carry neither type nor default, only a value.
- sdk/go/common/workspace/project.go `ValidateConfigValue`: string, integer (whole numbers and
  integer strings too), boolean ("true"/"false" strings too), object (a map), array (of items).
- pkg/workspace/config.go `mergeConfig`: a declared key of the project's namespace with neither
  default nor value must be set by the stack ("Stack ... is missing configuration"); a default is
  applied as a plaintext value.
- pkg/workspace/config.go `validateStackConfigValue`: a `secret` key whose stack value is not
  `secure:` fails ("must be encrypted as it's secret"), so a secret key with a default fails in
  every stack that does not set it (pulumi/pulumi#21865); typed values must have their type.
- `requiredPulumiVersion`: `type: object` needs 3.187.0 (#20132, first in v3.187.0); the CLI
  enforces the field from 3.219.0 (#21627, first in v3.219.0).
"""

from __future__ import annotations

import re

import pytest
import yaml

from tests.conftest import ROOT

PROJECT = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())
NAME = PROJECT["name"]
STACKS = sorted(p.name.split(".")[1] for p in ROOT.glob("Pulumi.*.yaml"))


def _valid(type_name: str, items: dict | None, value) -> bool:
    """ValidateConfigValue, for values as YAML decodes them."""
    if type_name == "string":
        return isinstance(value, str)
    if type_name == "integer":
        if isinstance(value, bool):
            return False
        if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
            return True
        return isinstance(value, str) and re.fullmatch(r"[+-]?\d+", value) is not None
    if type_name == "boolean":
        return isinstance(value, bool) or value in ("true", "false")
    if type_name == "object":
        return isinstance(value, dict)
    if not isinstance(value, list) or items is None:
        return False
    return all(_valid(items["type"], items.get("items"), v) for v in value)


def _own(key: str) -> bool:
    return ":" not in key or key.startswith(f"{NAME}:")


def _full(key: str) -> str:
    return key if ":" in key else f"{NAME}:{key}"


def test_the_project_file_passes_project_validate():
    for key, decl in PROJECT["config"].items():
        assert not ("default" in decl and "value" in decl), key
        if not _own(key):
            assert "type" not in decl and "default" not in decl and "value" in decl, key
            continue
        if decl.get("type") == "array":
            assert "items" in decl, key
        if "type" in decl and "default" in decl:
            assert _valid(decl["type"], decl.get("items"), decl["default"]), key


def test_no_secret_key_has_a_default():
    secret = {k: d for k, d in PROJECT["config"].items() if d.get("secret")}
    assert [k for k, d in secret.items() if "default" in d or "value" in d] == []


@pytest.mark.parametrize("stack", STACKS)
def test_every_stack_file_passes_merge_and_validation(stack):
    values = yaml.safe_load((ROOT / f"Pulumi.{stack}.yaml").read_text())["config"]
    for key, decl in PROJECT["config"].items():
        full = _full(key)
        if full not in values:
            has_default = "default" in decl or "value" in decl
            assert has_default or not _own(key), f"Pulumi.{stack}.yaml is missing {full}"
            continue
        value = values[full]
        if decl.get("secret"):
            assert isinstance(value, dict) and set(value) == {"secure"}, f"{full} not secure"
        elif "type" in decl:
            assert _valid(decl["type"], decl.get("items"), value), f"{full} is not {decl['type']}"


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


def test_required_pulumi_version_covers_the_features_used_and_is_enforced():
    match = re.fullmatch(r">=(\d+\.\d+\.\d+)", PROJECT["requiredPulumiVersion"])
    assert match, PROJECT["requiredPulumiVersion"]
    floor = _version(match.group(1))
    uses_objects = any(d.get("type") == "object" for d in PROJECT["config"].values())
    assert not uses_objects or floor >= (3, 187, 0)
    assert floor >= (3, 219, 0)  # an older CLI ignores the field altogether
