"""hyperpod-dpd-images-by-digest: every image the stack runs is pinned by digest
(`repo:tag@sha256:<64 hex>`, core/images.py). A tag is movable: the registry may serve other bytes
under it tomorrow, so two pools (or two nodes of one pool) that pull it at different times can run
different builds, and a compromised or re-pushed tag runs without any change to the stack. A digest
names the bytes (OCI image spec, descriptor.md "Digests"; checkov CKV_K8S_43). Advisory: the
documented images are published by tag, and `hyperpod-dpd fetch --stack <stack>` resolves each to
its digest and prints the `pulumi config set --path` command that pins it. The Jobs the stack registers (checkpoint staging) run
`hyperpod-dpd:jobs.image`; an endpoint's workers run its `image`."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from core.images import is_pinned, pin_command
from core.vocabulary import JOB_TYPE, PROJECT, urn_stack
from policies.rules import views
from policies.rules.base import Finding, Rule

JOBS_IMAGE_KEY = f"{PROJECT}:jobs.image"


def _pod_images(pod_spec: Mapping[str, Any]) -> Iterator[str]:
    for group in ("initContainers", "containers"):
        for container in pod_spec.get(group) or []:
            yield container.get("image")


def images(resources) -> Iterator[tuple[str, str, Any]]:
    """(urn, config key, image) of every image the stack runs."""
    for iec in views.endpoints(resources):
        image = views.spec(iec).get("worker", {}).get("image")
        yield iec.urn, views.endpoint_key(iec, "image"), image
    for job in views.of_type(resources, JOB_TYPE):
        pod = ((job.props.get("spec") or {}).get("template") or {}).get("spec") or {}
        for image in _pod_images(pod):
            yield job.urn, JOBS_IMAGE_KEY, image


def check(resources, limits):
    for urn, key, image in images(resources):
        if not isinstance(image, str) or not views.known(image) or is_pinned(image):
            continue
        yield Finding(
            urn,
            f"image {image} runs by tag alone (the registry can serve other bytes under it); pin "
            f"{key} by digest: `hyperpod-dpd fetch --stack {urn_stack(urn)}` prints the "
            f"command, {pin_command(key, f'{image}@sha256:<64 hex digits>', urn_stack(urn))}",
        )


RULE = Rule("hyperpod-dpd-images-by-digest", "Every image pinned by digest", "advisory", check)
