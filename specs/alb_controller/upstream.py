"""The vendored original: upstream's IAM policy file at the pinned release, read from the
repository (nothing is downloaded at deploy time), its bytes held to the pin's sha256."""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any

from core.versions import ALB_CONTROLLER_POLICY

VENDORED = Path(__file__).with_name("iam_policy.json")


class VendoredFileChanged(ValueError):
    pass


@functools.cache
def upstream_policy() -> dict[str, Any]:
    """`docs/install/iam_policy.json` of kubernetes-sigs/aws-load-balancer-controller at the pinned
    commit, parsed. Other bytes are refused: an edited copy would deploy a policy nobody
    reviewed against the upstream file."""
    pin = ALB_CONTROLLER_POLICY
    data = VENDORED.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != pin.sha256:
        raise VendoredFileChanged(
            f"{VENDORED} has sha256 {digest}, not that of {pin.path} of {pin.repo}@{pin.ref} "
            f"(tag {pin.tag}, core/versions.py: {pin.sha256}); restore it (`git checkout -- "
            "specs/alb_controller/iam_policy.json`), or vendor a new release and raise the pin "
            "in the same change"
        )
    return json.loads(data)
