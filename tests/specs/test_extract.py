"""scripts/extract_crd_schema.py and the JSON schemas it committed.

tests/specs/crds/ holds the operator's CRDs the committed schemas were extracted from, gzipped,
as published: v3.3 from aws/sagemaker-hyperpod-cli at 1a63d6ec, v3.2 from the same repository at
011ca927123e (same path in the repo: specs/schema/extract.py, _CLI_CRD). So the comparison runs
in every clone, and the script's default reads them.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import pytest

from settings.yaml_files import safe_load
from specs.schema.extract import (
    CRD_NAME,
    KNOWN_CRDS,
    extract,
    render,
    schema_file,
    strip_descriptions,
)
from tests.conftest import ROOT

SCRIPT = ROOT / "scripts" / "extract_crd_schema.py"
CRDS = ROOT / "tests" / "specs" / "crds"

# A CRD shaped like the operator's: Helm-templated metadata, descriptions everywhere, and the
# traps: a property named "description" and a default value holding a "description" key.
TINY_CRD = f"""
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  annotations:
    cert-manager.io/inject-ca-from: '{{{{ .Values.shortPrefix }}}}-system/serving-cert'
  name: {CRD_NAME}
spec:
  versions:
  - name: v1alpha1
    schema:
      openAPIV3Schema: {{type: object}}
  - name: v1
    schema:
      openAPIV3Schema:
        description: top
        type: object
        properties:
          spec:
            description: the spec
            type: object
            required: [description]
            properties:
              description:
                description: a property literally named description
                type: string
              tags:
                type: array
                description: tags
                items:
                  description: one tag
                  type: object
                  default: {{description: kept, name: x}}
              quantity:
                anyOf: [{{type: integer, description: i}}, {{type: string}}]
                x-kubernetes-int-or-string: true
"""


def _every_key(node, found=None):
    found = set() if found is None else found
    if isinstance(node, dict):
        found.update(node)
        for value in node.values():
            _every_key(value, found)
    elif isinstance(node, list):
        for value in node:
            _every_key(value, found)
    return found


def test_strip_descriptions_keeps_properties_and_data_named_description(tmp_path):
    crd = tmp_path / "crd.yaml"
    crd.write_text(TINY_CRD)
    doc = extract(crd, "9.9", "me/repo/crd.yaml@abc")
    assert {k: doc[k] for k in ("source", "operatorVersion", "crd", "version")} == {
        "source": "me/repo/crd.yaml@abc",
        "operatorVersion": "9.9",
        "crd": CRD_NAME,
        "version": "v1",
    }
    spec = doc["schema"]["properties"]["spec"]
    assert spec == {
        "type": "object",
        "required": ["description"],
        "properties": {
            "description": {"type": "string"},
            "tags": {
                "type": "array",
                "items": {"type": "object", "default": {"description": "kept", "name": "x"}},
            },
            "quantity": {
                "anyOf": [{"type": "integer"}, {"type": "string"}],
                "x-kubernetes-int-or-string": True,
            },
        },
    }
    assert "description" not in doc["schema"]


def test_strip_descriptions_leaves_its_input_alone():
    node = {"description": "d", "properties": {"a": {"description": "x", "type": "string"}}}
    assert strip_descriptions(node) == {"properties": {"a": {"type": "string"}}}
    assert node["description"] == "d"


def test_extract_rejects_another_crd(tmp_path):
    crd = tmp_path / "crd.yaml"
    crd.write_text(TINY_CRD.replace(CRD_NAME, "jumpstartmodels.inference.sagemaker.aws.amazon.com"))
    with pytest.raises(ValueError, match=r"metadata\.name is 'jumpstartmodels"):
        extract(crd, "3.3", "x")


def test_script_writes_deterministic_sorted_json(tmp_path):
    crd = tmp_path / "crd.yaml"
    crd.write_text(TINY_CRD)
    args = [sys.executable, str(SCRIPT), "--crd", str(crd), "--operator-version", "9.9"]
    args += ["--source", "me/x@1", "--out-dir", str(tmp_path)]
    subprocess.run(args, check=True, capture_output=True, cwd=tmp_path)
    out = tmp_path / "inferenceendpointconfig-v9.9.json"
    first = out.read_text()
    subprocess.run(args, check=True, capture_output=True, cwd=tmp_path)
    assert out.read_text() == first == render(json.loads(first))
    check = subprocess.run([*args, "--check"], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    out.write_text(first.replace("9.9", "9.8"))
    check = subprocess.run([*args, "--check"], capture_output=True, text=True)
    assert check.returncode == 1 and "out of date" in check.stderr


def test_script_reads_the_crds_in_the_repository_by_default():
    """Without --reference-dir the script reads the gzipped CRDs in tests/specs/crds/, so --check
    needs nothing outside the clone."""
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


def test_script_reports_a_missing_crd(tmp_path):
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--reference-dir", str(tmp_path), "--check"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2 and "not found" in result.stderr


@pytest.mark.parametrize("version", sorted(KNOWN_CRDS))
def test_committed_schema_header_and_content(version):
    text = schema_file(version).read_text()
    doc = json.loads(text)
    assert text == render(doc)  # sorted keys, indent 1: regenerating cannot reorder it
    assert doc["source"] == KNOWN_CRDS[version][1]
    assert doc["source"].startswith("aws/sagemaker-hyperpod-cli/helm_chart/")
    assert (doc["operatorVersion"], doc["crd"], doc["version"]) == (version, CRD_NAME, "v1")
    spec = doc["schema"]["properties"]["spec"]
    assert sorted(spec["required"]) == ["modelName", "modelSourceConfig", "worker"]
    assert {"pdSpec", "intelligentRoutingSpec", "kvCacheSpec"} <= set(spec["properties"])
    pd = spec["properties"]["pdSpec"]["properties"]
    assert pd["routingThreshold"]["default"] == 4096
    assert pd["prefillSpec"]["properties"]["replicas"]["minimum"] == 1
    # Descriptions are gone; nothing in this CRD is a property called "description".
    assert "description" not in _every_key(doc["schema"])


@pytest.mark.parametrize("version", sorted(KNOWN_CRDS))
def test_committed_schema_is_what_the_script_extracts_from_the_crd(version, tmp_path):
    file_name, source = KNOWN_CRDS[version]
    crd = tmp_path / file_name
    crd.write_bytes(gzip.decompress((CRDS / f"{file_name}.gz").read_bytes()))
    assert render(extract(crd, version, source)) == schema_file(version).read_text()
    # The spec keeps every property the CRD declares.
    raw = safe_load(crd.read_text())
    (v1,) = (v for v in raw["spec"]["versions"] if v["name"] == "v1")
    raw_spec = v1["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    kept = json.loads(schema_file(version).read_text())["schema"]["properties"]["spec"]
    assert set(kept["properties"]) == set(raw_spec)
