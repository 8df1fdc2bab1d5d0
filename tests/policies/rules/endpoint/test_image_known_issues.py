"""hyperpod-dpd-image-known-issues (policies/rules/endpoint/image_known_issues.py): images with a
known DPD breakage are flagged, their neighbouring versions are not."""

from __future__ import annotations

import pytest

from core.versions import LMCACHE_VLLM_IMAGE
from tests.policies.conftest import iec_spec
from tests.policies.rules.helpers import findings


@pytest.mark.parametrize(
    "image",
    [
        "lmcache/vllm-openai:v0.4.4",
        "lmcache/vllm-openai:0.4.4-cu128",
        "registry.example/vllm:nixl-1.2.0",
    ],
)
def test_images_with_a_known_dpd_breakage(dev, image):
    iec_spec(dev)["worker"]["image"] = image
    ((_, message),) = findings("hyperpod-dpd-image-known-issues", dev)
    assert message.startswith(f"image {image} carries a known DPD breakage: ")


@pytest.mark.parametrize(
    "image", ["lmcache/vllm-openai:v0.4.3", "lmcache/vllm-openai:v0.4.41", "x/nixl-1.2.1"]
)
def test_neighbouring_versions_are_not_flagged(dev, image):
    iec_spec(dev)["worker"]["image"] = image
    assert findings("hyperpod-dpd-image-known-issues", dev) == []


def test_a_known_bad_image_pinned_by_digest_is_still_known_bad(dev):
    iec_spec(dev)["worker"]["image"] = f"lmcache/vllm-openai:v0.4.4@sha256:{'5eed' * 16}"
    ((_, message),) = findings("hyperpod-dpd-image-known-issues", dev)
    assert "LMCache 0.4.4 regressed on HyperPod" in message
    iec_spec(dev)["worker"]["image"] = f"{LMCACHE_VLLM_IMAGE}@sha256:{'5eed' * 16}"
    assert findings("hyperpod-dpd-image-known-issues", dev) == []


@pytest.mark.parametrize("hub", ["docker.io/", "index.docker.io/"])
def test_a_known_bad_image_written_with_docker_hubs_domain_is_still_known_bad(dev, hub):
    """`docker.io/lmcache/vllm-openai` is the image the pattern knows as lmcache/vllm-openai."""
    iec_spec(dev)["worker"]["image"] = f"{hub}lmcache/vllm-openai:v0.4.4"
    ((_, message),) = findings("hyperpod-dpd-image-known-issues", dev)
    assert message.startswith(f"image {hub}lmcache/vllm-openai:v0.4.4 carries a known DPD ")
    iec_spec(dev)["worker"]["image"] = f"{hub}lmcache/vllm-openai:v0.4.4@sha256:{'5eed' * 16}"
    assert len(findings("hyperpod-dpd-image-known-issues", dev)) == 1
    iec_spec(dev)["worker"]["image"] = f"{hub}{LMCACHE_VLLM_IMAGE}"
    assert findings("hyperpod-dpd-image-known-issues", dev) == []
