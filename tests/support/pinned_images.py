"""A stack's config with every image it runs pinned by digest, as `hyperpod-dpd fetch --stack`
prints the commands that set them: the repo's stacks run their images by tag (no registry is
reachable from here to resolve their digests), so hyperpod-dpd-images-by-digest names each of them; the
tests that judge everything else judge the stacks pinned, and the advisory is tested on its own
(tests/policies/rules/security/test_images_by_digest.py)."""

from __future__ import annotations

import copy
from typing import Any

from core.images import parse_image
from core.versions import DLC_VLLM_IMAGE, JOB_PYTHON_IMAGE

# sha256 of nothing a registry serves: the tests never pull.
TEST_DIGEST = "sha256:" + "d1ce" * 16
NS = "hyperpod-dpd"


def pin(image: str, digest: str = TEST_DIGEST) -> str:
    return str(parse_image(image).with_digest(digest))


def pinned(raw: dict[str, Any], digest: str = TEST_DIGEST) -> dict[str, Any]:
    """A copy of `raw` with the worker images of its endpoints and the Jobs' image pinned."""
    out = copy.deepcopy(raw)
    entries = [out[f"{NS}:endpoint"]] if isinstance(out.get(f"{NS}:endpoint"), dict) else []
    entries += [e for e in (out.get(f"{NS}:endpoints") or {}).values() if isinstance(e, dict)]
    for entry in entries:
        entry["image"] = pin(entry.get("image", DLC_VLLM_IMAGE), digest)
    jobs = out.setdefault(f"{NS}:jobs", {})
    jobs["image"] = pin(jobs.get("image", JOB_PYTHON_IMAGE), digest)
    return out


BY_TAG = "hyperpod-dpd-images-by-digest"


def beside_tags(violations: list[Any]) -> list[Any]:
    """The violations (Violation objects or policy-report.json entries) but the advisory naming
    the images the repo's stacks run by tag."""
    return [v for v in violations if (v["policy"] if isinstance(v, dict) else v.policy) != BY_TAG]
