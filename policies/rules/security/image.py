"""hyperpod-dpd-image: one DPD-capable image (vLLM + LMCache + NIXL + EFA libfabric) for both
roles. The IEC has one worker image, so both roles share it by construction; the image must be
one of the two the docs support, or one the user marks DPD-capable. A reference pinned by digest
is judged by the tag beside it (`repo:tag@sha256:...`, core/images.py); a bare `repo@sha256:...`
names no tag to judge. Names are compared by their familiar form: `docker.io/lmcache/vllm-openai`
is the documented lmcache/vllm-openai."""

from __future__ import annotations

from core.images import ImageRefError, parse_image, tag_reference
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
        if not views.known(image) or marked:
            continue
        try:
            ref = parse_image(image)
        except ImageRefError:
            ref = None  # the settings refuse it; the pack may meet anything
        trusted = DPD_IMAGES + limits.extra_dpd_images
        familiar = {tag_reference(t) for t in trusted}
        if image not in trusted and (ref is None or ref.familiar_tagged not in familiar):
            bare = ref is not None and ref.pinned and ref.tag is None
            untagged = " (pinned without its tag: write repo:tag@sha256:...)" * bare
            yield Finding(
                iec.urn,
                f"image {image} is not a documented DPD image{untagged} "
                f"({', '.join(DPD_IMAGES)}); set "
                f"{views.endpoint_key(iec, 'image')} to {DPD_IMAGES[0]} (or the other), or set "
                f"{views.endpoint_key(iec, 'imageDpdCapable')}: true if it carries vLLM, "
                "LMCache, NIXL and the EFA provider",
            )


RULE = Rule("hyperpod-dpd-image", "A DPD-capable worker image", "mandatory", check)
