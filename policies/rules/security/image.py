"""hyperpod-dpd-image: one DPD-capable image (vLLM + LMCache + NIXL + EFA libfabric) for both
roles. The IEC has one worker image, so both roles share it by construction; the image must be
one of the two the docs support, or one the user marks DPD-capable."""

from __future__ import annotations

from core.versions import DPD_IMAGES
from policies.rules import views
from policies.rules.base import Finding, Rule


def check(resources, limits):
    for iec in views.endpoints(resources):
        if views.pd_spec(iec) is None:
            continue
        image = views.spec(iec).get("worker", {}).get("image")
        marked = views.annotation(iec, "dpd-capable-image") == "true"
        if views.unknown(image):
            yield views.unchecked(iec.urn, "the worker image")
        if views.known(image) and image not in DPD_IMAGES + limits.extra_dpd_images and not marked:
            yield Finding(
                iec.urn,
                f"image {image} is not a documented DPD image ({', '.join(DPD_IMAGES)}); set "
                f"{views.endpoint_key(iec, 'image')} to {DPD_IMAGES[0]} (or the other), or set "
                f"{views.endpoint_key(iec, 'imageDpdCapable')}: true if it carries vLLM, "
                "LMCache, NIXL and the EFA provider",
            )


RULE = Rule("hyperpod-dpd-image", "A DPD-capable worker image", "mandatory", check)
