"""Validate InferenceEndpointConfig manifests against the operator's own CRD schema, offline.

The schemas are extracted from the HyperPod Inference Operator's CRDs (scripts/
extract_crd_schema.py) and committed here, because users' machines have no copy of the CRDs.
"""

from __future__ import annotations

import copy
import json
import re
from functools import cache
from typing import Any

import jsonschema

from core.units import INT32_MAX, INT64_MAX
from core.vocabulary import IEC_API_VERSION as API_VERSION
from core.vocabulary import IEC_KIND as KIND
from specs.schema.extract import schema_file

# Versions we keep a schema for; a newer operator is checked against the newest one.
SCHEMA_VERSIONS = ("3.2", "3.3")
_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?$")
_INT_RANGES = {"int32": (-INT32_MAX - 1, INT32_MAX), "int64": (-INT64_MAX - 1, INT64_MAX)}


def schema_version_for(operator_version: str) -> str:
    """ "3.2" -> "3.2"; "3.3", "v3.3.1", "3.5", "4.0" -> "3.3"; older or malformed: ValueError."""
    match = _VERSION.match(str(operator_version).strip())
    if not match:
        raise ValueError(
            f"inferenceOperator.version = {operator_version!r}: not a version such as '3.3'. "
            "Use the operator's major.minor (image tag v3.3 -> '3.3')."
        )
    wanted = (int(match.group(1)), int(match.group(2)))
    known = [v for v in SCHEMA_VERSIONS if tuple(map(int, v.split("."))) <= wanted]
    if not known:
        raise ValueError(
            f"inferenceOperator.version = {operator_version!r}: DPD (spec.pdSpec) needs operator "
            f"3.2 or newer; schemas are kept for {', '.join(SCHEMA_VERSIONS)}. Upgrade the "
            "amazon-sagemaker-hyperpod-inference add-on (v1.3.0-eksbuild.1 = 3.2)."
        )
    return known[-1]


@cache
def spec_has_field(operator_version: str, *path: str) -> bool:
    """Whether that operator version's CRD has field spec.<path> (e.g. "loadBalancer",
    "idleTimeoutSeconds": 3.3 has it, 3.2 does not)."""
    node = _load(schema_version_for(operator_version))["schema"]["properties"]["spec"]
    for part in path:
        node = (node.get("properties") or {}).get(part)
        if node is None:
            return False
    return True


def load_schema(operator_version: str) -> dict[str, Any]:
    """The CRD's openAPIV3Schema (descriptions stripped) for that operator version."""
    return copy.deepcopy(_load(schema_version_for(operator_version))["schema"])


@cache
def _load(schema_version: str) -> dict[str, Any]:
    return json.loads(schema_file(schema_version).read_text())


def validate_manifest(
    manifest: dict[str, Any], operator_version: str, *, strict: bool = True
) -> list[str]:
    """Human-readable problems of an InferenceEndpointConfig manifest; [] when it is valid.

    `strict` also reports fields the CRD does not know: kubectl's default server-side field
    validation rejects them, and without it the API server silently drops them (a typo such as
    `routingThresold` would take the default instead).
    """
    if not isinstance(manifest, dict):
        return [f"manifest: expected a mapping, got {type(manifest).__name__}"]
    errors = []
    if manifest.get("apiVersion") != API_VERSION:
        errors.append(f"apiVersion: {manifest.get('apiVersion')!r} must be {API_VERSION!r}")
    if manifest.get("kind") != KIND:
        errors.append(f"kind: {manifest.get('kind')!r} must be {KIND!r}")
    name = (manifest.get("metadata") or {}).get("name")
    if not isinstance(name, str) or not name:
        errors.append("metadata.name: required field is missing")
    spec = manifest.get("spec")
    if not isinstance(spec, dict):
        return [*errors, "spec: required field is missing (or not a mapping)"]
    version = schema_version_for(operator_version)
    validator = _validator(version, strict)
    found = [_describe(e, version) for e in validator.iter_errors(spec)]
    return errors + sorted(found)


@cache
def _validator(schema_version: str, strict: bool) -> jsonschema.protocols.Validator:
    spec_schema = _load(schema_version)["schema"]["properties"]["spec"]
    return jsonschema.Draft7Validator(_to_json_schema(spec_schema, strict))


def _to_json_schema(node: Any, strict: bool) -> Any:
    """Kubernetes structural schema -> plain JSON Schema.

    `x-kubernetes-int-or-string` means "integer or string" whatever `type` says; with `strict`,
    objects with declared properties get `additionalProperties: false` unless Kubernetes
    preserves unknown fields there. `format: int32/int64` becomes the range the API server
    holds such a field to (jsonschema ignores formats it does not know; the API server does not).
    """
    if isinstance(node, list):
        return [_to_json_schema(n, strict) for n in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key in ("properties", "patternProperties") and isinstance(value, dict):
            out[key] = {name: _to_json_schema(sub, strict) for name, sub in value.items()}
        elif key in ("items", "additionalProperties", "not", "allOf", "anyOf", "oneOf"):
            out[key] = _to_json_schema(value, strict)
        else:
            out[key] = value
    if out.get("type") == "integer" and out.get("format") in _INT_RANGES:
        low, high = _INT_RANGES[out["format"]]
        out["minimum"] = max(out.get("minimum", low), low)
        out["maximum"] = min(out.get("maximum", high), high)
    if out.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        out.setdefault("anyOf", [{"type": "integer"}, {"type": "string"}])
    if (
        strict
        and "properties" in out
        and "additionalProperties" not in out
        and not out.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    return out


def _path(parts: Any) -> str:
    """spec.worker.environmentVariables[0].name; keys that are not identifiers in ["..."]."""
    text = "spec"
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", part):
            text += f".{part}"
        else:
            text += f'["{part}"]'
    return text


def _describe(error: jsonschema.ValidationError, schema_version: str) -> str:
    where = list(error.absolute_path)
    if error.validator == "required":
        missing = [p for p in error.validator_value if p not in error.instance]
        return "; ".join(f"{_path([*where, p])}: required field is missing" for p in missing)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = error.schema.get("properties", {})
        extra = sorted(k for k in error.instance if k not in allowed)
        return "; ".join(
            f"{_path([*where, k])}: unknown field (the operator v{schema_version} CRD has "
            f"{', '.join(sorted(allowed))})"
            for k in extra
        )
    if error.validator == "anyOf" and error.schema.get("x-kubernetes-int-or-string"):
        return f"{_path(where)}: {error.instance!r} must be an integer or a string"
    return f"{_path(where)}: {error.message}"
