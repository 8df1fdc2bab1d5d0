"""Manifests against the committed CRD schemas: the published samples pass, mistakes are named."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from specs.schema import load_schema, schema_version_for, validate_manifest

SAMPLES = Path(__file__).parent / "samples"
DPD_EXAMPLE = SAMPLES / "aws-docs__sagemaker-hyperpod-model-deployment-dpd__complete-example.yaml"
# These two use a placeholder TLS URI (README of the samples): exactly one error each.
PLACEHOLDER_TLS = {
    "sagemaker-hyperpod-cli__v1_llama31_8b_intelligent_routing.yaml",
    "sagemaker-hyperpod-cli__v1_llama31_8b_kv_cache_l1_l2.yaml",
}
ALL_SAMPLES = sorted(SAMPLES.glob("*.yaml"))


def _load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


@pytest.fixture
def dpd() -> dict:
    return _load(DPD_EXAMPLE)


def test_samples_are_present():
    assert DPD_EXAMPLE in ALL_SAMPLES and len(ALL_SAMPLES) == 9


@pytest.mark.parametrize("version", ["3.2", "3.3"])
def test_the_docs_dpd_example_is_valid(dpd, version):
    assert validate_manifest(dpd, version) == []


@pytest.mark.parametrize("path", ALL_SAMPLES, ids=lambda p: p.stem)
def test_published_samples_validate_against_v33(path):
    errors = validate_manifest(_load(path), "3.3")
    if path.name in PLACEHOLDER_TLS:
        assert errors == [
            "spec.tlsConfig.tlsCertificateOutputS3Uri: '<PLACEHOLDER_TLS_CERT_S3_URI>' does not "
            "match '^s3://([^/]+)/?(.*)$'"
        ]
    else:
        assert errors == []


def test_a_broken_manifest_gets_one_message_per_mistake_with_its_path(dpd):
    bad = copy.deepcopy(dpd)
    bad["spec"]["intelligentRoutingSpec"]["routingStrategy"] = "fastest"
    del bad["spec"]["worker"]
    bad["spec"]["pdSpec"]["prefillSpec"]["replicas"] = 0
    bad["spec"]["pdSpec"]["routingThresold"] = 100  # typo: the API server would drop it
    bad["spec"]["pdSpec"]["decodingSpec"]["resources"]["limits"]["nvidia.com/gpu"] = [8]
    bad["kind"] = "InferenceEndpoint"
    errors = validate_manifest(bad, "3.3")
    assert errors == [
        "kind: 'InferenceEndpoint' must be 'InferenceEndpointConfig'",
        "spec.intelligentRoutingSpec.routingStrategy: 'fastest' is not one of ['prefixaware', "
        "'kvaware', 'session', 'roundrobin']",
        'spec.pdSpec.decodingSpec.resources.limits["nvidia.com/gpu"]: [8] must be an integer or '
        "a string",
        "spec.pdSpec.prefillSpec.replicas: 0 is less than the minimum of 1",
        "spec.pdSpec.routingThresold: unknown field (the operator v3.3 CRD has autoScalingSpec, "
        "decodingSpec, prefillSpec, routingThreshold, topologySpec)",
        "spec.worker: required field is missing",
    ]
    # Not strict: unknown fields pass (as with `kubectl apply --validate=false`).
    assert not any("routingThresold" in e for e in validate_manifest(bad, "3.3", strict=False))


def test_int_or_string_quantities_accept_both(dpd):
    limits = dpd["spec"]["pdSpec"]["prefillSpec"]["resources"]["limits"]
    limits["nvidia.com/gpu"] = 8
    limits["memory"] = "1024Gi"
    assert validate_manifest(dpd, "3.3") == []
    limits["memory"] = "lots"
    (error,) = validate_manifest(dpd, "3.3")
    assert error.startswith(
        "spec.pdSpec.prefillSpec.resources.limits.memory: 'lots' does not match"
    )


def test_v33_fields_are_unknown_to_v32(dpd):
    dpd["spec"]["loadBalancer"]["idleTimeoutSeconds"] = 120
    dpd["spec"]["modelCacheConfig"] = {"imageCache": {"enabled": True}}
    assert validate_manifest(dpd, "3.3") == []
    errors = validate_manifest(dpd, "3.2")
    assert [e.split(":")[0] for e in errors] == [
        "spec.loadBalancer.idleTimeoutSeconds",
        "spec.modelCacheConfig",
    ]


def test_header_checks(dpd):
    dpd["apiVersion"] = "inference.sagemaker.aws.amazon.com/v1alpha1"
    del dpd["metadata"]["name"]
    assert validate_manifest(dpd, "3.3") == [
        "apiVersion: 'inference.sagemaker.aws.amazon.com/v1alpha1' must be "
        "'inference.sagemaker.aws.amazon.com/v1'",
        "metadata.name: required field is missing",
    ]
    assert validate_manifest({"apiVersion": "x"}, "3.3")[-1].startswith("spec: required field")
    assert validate_manifest([], "3.3") == ["manifest: expected a mapping, got list"]


@pytest.mark.parametrize(
    ("given", "schema"),
    [
        ("3.2", "3.2"),
        ("3.3", "3.3"),
        ("v3.3", "3.3"),
        ("3.2.1", "3.2"),
        ("3.5", "3.3"),
        ("4.0", "3.3"),
    ],
)
def test_operator_version_picks_the_schema(given, schema):
    assert schema_version_for(given) == schema


@pytest.mark.parametrize("bad", ["3.1", "2.9", "latest", ""])
def test_operator_version_errors_name_the_key(bad):
    with pytest.raises(ValueError, match=r"inferenceOperator\.version"):
        load_schema(bad)


def test_load_schema_returns_a_copy_with_the_required_fields():
    schema = load_schema("3.3")
    assert set(schema["properties"]["spec"]["required"]) == {
        "modelName",
        "modelSourceConfig",
        "worker",
    }
    schema["properties"].clear()
    assert load_schema("3.3")["properties"]  # the cached original is untouched
    assert "modelCacheConfig" in load_schema("3.3")["properties"]["spec"]["properties"]
    assert "modelCacheConfig" not in load_schema("3.2")["properties"]["spec"]["properties"]


@pytest.mark.parametrize("version", ["3.2", "3.3"])
def test_an_int32_field_beyond_its_range_is_refused_as_the_api_server_does(dpd, version):
    """`format: int32` is a range to the API server (kube-openapi IsValueValidAgainstRange)."""
    scaling = {"minReplicaCount": 1, "maxReplicaCount": 2, "cooldownPeriod": 2**31 - 1}
    dpd["spec"]["autoScalingSpec"] = scaling
    assert validate_manifest(dpd, version) == []
    scaling["cooldownPeriod"] = 2**31
    (error,) = validate_manifest(dpd, version)
    assert error.startswith("spec.autoScalingSpec.cooldownPeriod: 2147483648 is greater than")
