"""The operator's caches as rendered (specs/endpoint.py): `endpoints.<key>.cache` becomes
spec.modelCacheConfig, valid against the operator's CRD v3.3; without a cache, nothing."""

from __future__ import annotations

import pytest

from core.versions import MODEL_CACHE_MINIMUM_OPERATOR
from settings import parse_settings
from specs.endpoint import ClusterFacts, build_endpoint
from specs.schema import spec_has_field, validate_manifest
from tests.conftest import canary_raw, with_cache

NS = "hyperpod-dpd"
FACTS = ClusterFacts(model_bucket="models-bucket", az_name="us-east-2b")


def _specs(raw):
    s = parse_settings(raw)
    return {e.key: build_endpoint(s, FACTS, entry=e).to_manifest() for e in s.entries()}


def test_the_minimum_operator_is_the_first_crd_with_the_field():
    assert not spec_has_field("3.2", "modelCacheConfig")
    assert spec_has_field("3.3", "modelCacheConfig", "weightsCache", "hostPath")
    assert MODEL_CACHE_MINIMUM_OPERATOR == (3, 3)


@pytest.mark.parametrize(
    "cache, rendered",
    [
        ({"weights": True}, {"weightsCache": {"enabled": True, "hostPath": "/opt/dlami/nvme"}}),
        ({"image": True}, {"imageCache": {"enabled": True}}),
        (
            {"weights": True, "image": True},
            {
                "weightsCache": {"enabled": True, "hostPath": "/opt/dlami/nvme"},
                "imageCache": {"enabled": True},
            },
        ),
    ],
)
def test_a_cache_renders_model_cache_config_valid_against_crd_3_3(cache, rendered):
    manifests = _specs(with_cache(canary_raw(), **cache))
    assert manifests["candidate"]["spec"]["modelCacheConfig"] == rendered
    assert "modelCacheConfig" not in manifests["baseline"]["spec"]  # its own setting: off
    for manifest in manifests.values():
        assert validate_manifest(manifest, "3.3") == []


def test_without_a_cache_nothing_is_rendered():
    for manifest in _specs(canary_raw()).values():
        assert "modelCacheConfig" not in manifest["spec"]
