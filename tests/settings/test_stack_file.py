"""Stack files are read as the Pulumi CLI reads them: defaults, namespaces, secure values."""

from __future__ import annotations

import json
import shutil

import pytest

from settings import ConfigError
from settings.stack_file import SECRET_PLACEHOLDER, load_stack
from tests.conftest import ROOT


@pytest.fixture
def project(tmp_path):
    for name in ("Pulumi.yaml", "Pulumi.dev.yaml"):
        shutil.copy(ROOT / name, tmp_path / name)
    return tmp_path


def test_objects_are_passed_as_json_and_strings_as_is(project):
    stack = load_stack(project, "dev")
    assert stack.config["aws:region"] == "us-east-2"
    assert json.loads(stack.config["hyperpod-dpd:network"])["controlPlaneAzIds"] == [
        "use2-az1",
        "use2-az2",
    ]
    assert stack.secret_keys == []


def test_project_defaults_apply_under_stack_values(project):
    stack = load_stack(project, "dev")
    # Pulumi.dev.yaml sets no hyperpod-dpd:cost: Pulumi.yaml's declared default applies.
    assert json.loads(stack.config["hyperpod-dpd:cost"]) == {"hourlyPrices": {}}
    assert "hyperpod-dpd:hfToken" not in stack.config  # a secret: never declared, never defaulted
    assert json.loads(stack.config["hyperpod-dpd:eks"])["kubernetesVersion"] == "1.33"


def test_secure_values_become_secret_placeholders(project):
    path = project / "Pulumi.dev.yaml"
    path.write_text(
        path.read_text()
        + "  hyperpod-dpd:hfToken:\n    secure: v1:AAAABBBBccccDDDD\n"
        + "  hyperpod-dpd:endpoint2:\n    inner:\n      secure: v1:XYZ\n"
    )
    stack = load_stack(project, "dev")
    assert stack.config["hyperpod-dpd:hfToken"] == SECRET_PLACEHOLDER
    assert json.loads(stack.config["hyperpod-dpd:endpoint2"]) == {"inner": SECRET_PLACEHOLDER}
    assert stack.secret_keys == ["hyperpod-dpd:endpoint2", "hyperpod-dpd:hfToken"]
    assert "v1:AAAABBBB" not in json.dumps(stack.config)


def test_short_keys_are_project_namespaced(project):
    path = project / "Pulumi.dev.yaml"
    path.write_text(path.read_text() + "  observability:\n    enabled: false\n")
    assert json.loads(load_stack(project, "dev").config["hyperpod-dpd:observability"]) == {
        "enabled": False
    }


def test_unknown_stack_lists_the_known_ones(project):
    with pytest.raises(ConfigError) as info:
        load_stack(project, "staging")
    assert "found: dev" in str(info.value)
    assert "create Pulumi.staging.yaml" in str(info.value)


def test_yaml_syntax_error_names_file_and_line(project):
    (project / "Pulumi.dev.yaml").write_text("config:\n  aws:region: [us-east-2\n")
    with pytest.raises(ConfigError) as info:
        load_stack(project, "dev")
    assert "Pulumi.dev.yaml" in str(info.value) and "line 3" in str(info.value)
