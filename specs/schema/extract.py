"""Turn the operator's InferenceEndpointConfig CRD into the compact JSON schema kept in-repo.

The CRD files are Helm templates, but the templated strings sit only in metadata and the
conversion webhook, so they load as plain YAML. Descriptions are ~70% of the file and play no part
in validation, so they are dropped; everything else is kept as the API server sees it.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from settings.yaml_files import safe_load

CRD_NAME = "inferenceendpointconfigs.inference.sagemaker.aws.amazon.com"
VERSION = "v1"
_CLI_CRD = (
    "aws/sagemaker-hyperpod-cli/helm_chart/HyperPodHelmChart/charts/inference-operator/"
    "config/crd/inference.sagemaker.aws.amazon.com_inferenceendpointconfigs.yaml"
)
# Operator version -> (file name of the CRD, kept gzipped in tests/specs/crds/; the file in
# aws/sagemaker-hyperpod-cli it was taken from, at a commit: v3.3 is upstream PR #439's commit,
# whose parent is PR #440 "Bump inference-operator to v3.3"; v3.2's commit (2026-06-22) is
# abbreviated.)
KNOWN_CRDS = {
    "3.2": (
        "sagemaker-hyperpod-cli__v3.2__inference.sagemaker.aws.amazon.com_inferenceendpointconfigs.yaml",
        f"{_CLI_CRD}@011ca927123e",
    ),
    "3.3": (
        "sagemaker-hyperpod-cli__inference.sagemaker.aws.amazon.com_inferenceendpointconfigs.yaml",
        f"{_CLI_CRD}@1a63d6ecf6262489579a4ab28a54ca80948592a0",
    ),
}

# Keywords whose value is a map of name -> schema: their keys are property names, never keywords.
_SCHEMA_MAPS = ("properties", "patternProperties", "definitions", "$defs")
# Keywords whose value is a schema or a list of schemas.
_SCHEMA_VALUES = ("items", "additionalProperties", "not", "allOf", "anyOf", "oneOf")


def strip_descriptions(node: Any) -> Any:
    """A copy of a schema without the `description` keyword at any depth.

    Walks only schema positions, so a property named "description" and data such as `default`
    or `enum` values stay untouched.
    """
    if isinstance(node, list):
        return [strip_descriptions(n) for n in node]
    if not isinstance(node, dict):
        return node  # `additionalProperties: false` and similar
    out = {}
    for key, value in node.items():
        if key == "description":
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: strip_descriptions(sub) for name, sub in value.items()}
        elif key in _SCHEMA_VALUES:
            out[key] = strip_descriptions(value)
        else:
            out[key] = value
    return out


def extract(crd_path: Path, operator_version: str, source: str) -> dict[str, Any]:
    """The header object plus the description-free openAPIV3Schema of version v1 (of a CRD file,
    plain or gzipped: `.gz`)."""
    raw = crd_path.read_bytes()
    crd = safe_load(gzip.decompress(raw).decode() if crd_path.suffix == ".gz" else raw.decode())
    name = crd.get("metadata", {}).get("name")
    if name != CRD_NAME:
        raise ValueError(f"{crd_path}: metadata.name is {name!r}, expected {CRD_NAME!r}")
    versions = {v["name"]: v for v in crd["spec"]["versions"]}
    if VERSION not in versions:
        raise ValueError(f"{crd_path}: no version {VERSION} (found: {', '.join(versions)})")
    return {
        "source": source,
        "operatorVersion": operator_version,
        "crd": CRD_NAME,
        "version": VERSION,
        "schema": strip_descriptions(versions[VERSION]["schema"]["openAPIV3Schema"]),
    }


def render(doc: dict[str, Any]) -> str:
    """Deterministic text: sorted keys, indent 1 (diffable, yet a fraction of the CRD's size)."""
    return json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


SCHEMA_DIR = Path(__file__).parent


def schema_file(operator_version: str) -> Path:
    """Where the extracted schema of an operator version ("3.3") is committed."""
    return SCHEMA_DIR / f"inferenceendpointconfig-v{operator_version}.json"
