"""hyperpod-dpd-image (policies/rules/security/image.py): an image that is not a documented DPD image,
and the two ways to accept one (the pack's extra images limit, the stack's
dpd-capable-image annotation)."""

from __future__ import annotations

from core.versions import DPD_IMAGES
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
