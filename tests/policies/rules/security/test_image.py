"""hyperpod-dpd-image (policies/rules/security/image.py): an image that is not a documented DPD image,
and the two ways to accept one (the pack's extra images limit, the stack's
dpd-capable-image annotation)."""

from __future__ import annotations

import pytest

from core.versions import DPD_IMAGES, LMCACHE_VLLM_IMAGE
from policies.rules import Limits
from tests.policies.conftest import iec_spec, named
from tests.policies.rules.helpers import findings


def test_unknown_image(dev):
    iec_spec(dev)["worker"]["image"] = "vllm/vllm-openai:v0.19.0"
    ((_, message),) = findings("hyperpod-dpd-image", dev)
    assert message.startswith("image vllm/vllm-openai:v0.19.0 is not a documented DPD image (")
    assert "hyperpod-dpd:endpoint.imageDpdCapable: true" in message


def test_image_marked_dpd_capable_or_trusted_by_limits(dev):
    iec_spec(dev)["worker"]["image"] = "my.registry/vllm-dpd:1"
    assert len(findings("hyperpod-dpd-image", dev)) == 1
    assert (
        findings("hyperpod-dpd-image", dev, Limits(extra_dpd_images=("my.registry/vllm-dpd:1",)))
        == []
    )
    named(dev, "endpoint-iec").props["metadata"]["annotations"][
        "hyperpod-dpd/dpd-capable-image"
    ] = "true"
    assert findings("hyperpod-dpd-image", dev) == []


DIGEST = "sha256:" + "5eed" * 16


def test_a_documented_image_pinned_by_digest_is_still_the_documented_image(dev):
    iec_spec(dev)["worker"]["image"] = f"{DPD_IMAGES[0]}@{DIGEST}"
    assert findings("hyperpod-dpd-image", dev) == []
    iec_spec(dev)["worker"]["image"] = f"{DPD_IMAGES[0].partition(':')[0]}@{DIGEST}"
    ((_, message),) = findings("hyperpod-dpd-image", dev)
    assert "pinned without its tag: write repo:tag@sha256:..." in message


@pytest.mark.parametrize("hub", ["docker.io/", "index.docker.io/"])
def test_the_documented_docker_hub_image_written_with_its_domain_is_documented(dev, hub):
    """lmcache/vllm-openai:v0.4.3 is on Docker Hub: `docker.io/` before it names the same image."""
    assert LMCACHE_VLLM_IMAGE.startswith("lmcache/")
    iec_spec(dev)["worker"]["image"] = f"{hub}{LMCACHE_VLLM_IMAGE}"
    assert findings("hyperpod-dpd-image", dev) == []
    iec_spec(dev)["worker"]["image"] = f"{hub}{LMCACHE_VLLM_IMAGE}@{DIGEST}"
    assert findings("hyperpod-dpd-image", dev) == []
    # The pack's extra images compare the same way, whichever spelling either side uses.
    iec_spec(dev)["worker"]["image"] = f"{hub}team/vllm-dpd:1"
    assert findings("hyperpod-dpd-image", dev, Limits(extra_dpd_images=("team/vllm-dpd:1",))) == []
    iec_spec(dev)["worker"]["image"] = f"{hub}lmcache/vllm-openai:v0.4.2"  # another tag
    assert len(findings("hyperpod-dpd-image", dev)) == 1
