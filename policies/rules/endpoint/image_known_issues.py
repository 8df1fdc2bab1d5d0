"""hyperpod-dpd-image-known-issues: no worker image known to break DPD (core/versions.py lists
each with its public report). Mandatory: such an endpoint deploys, passes its health checks and
then transfers no KV cache (or far too slowly) while two GPU nodes are billed; a stack that has
verified a patched build under the same tag can lower the rule in hyperpod-dpd:policy. The patterns
know images by `repository:tag`: a reference pinned by digest is read by the tag beside it, and by
its familiar name (`docker.io/lmcache/vllm-openai:v0.4.4` is lmcache/vllm-openai:v0.4.4)."""

from __future__ import annotations

import re

from core.images import tag_reference
from core.versions import KNOWN_BAD_IMAGES, LMCACHE_VLLM_IMAGE
from policies.rules import views
from policies.rules.base import Finding, Rule


def check(resources, limits):
    for iec in views.endpoints(resources):
        image = views.spec(iec).get("worker", {}).get("image")
        if not isinstance(image, str) or not views.known(image):
            continue
        for pattern, report in KNOWN_BAD_IMAGES:
            if re.search(pattern, tag_reference(image)):
                yield Finding(
                    iec.urn,
                    f"image {image} carries a known DPD breakage: {report}; set "
                    f"{views.endpoint_key(iec, 'image')} to {LMCACHE_VLLM_IMAGE} (a build "
                    "without it) or the default DLC image",
                )


RULE = Rule(
    "hyperpod-dpd-image-known-issues", "No image with a known DPD breakage", "mandatory", check
)
