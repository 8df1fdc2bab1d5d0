"""checkov and parliament judge the dev, prod and canary plans: every finding is fixed or listed,
with its reason, in tests/security/reviewed.yaml. A new finding fails here, and so does a listed
one that no plan produces any more (the list stays what is true)."""

from __future__ import annotations

import pytest

from hyperpod_dpd.plan.planner import make_plan
from tests.conftest import stack_raw, write_project
from tests.security.scanners import STACKS, Scanned, is_reviewed, reviewed, scan
from tests.support.pinned_images import pinned

PINNED = "dev-pinned"  # the dev stack with every image pinned, as `hyperpod-dpd fetch` prints


@pytest.fixture(scope="module")
def scanned(tmp_path_factory) -> dict[str, list]:
    """Both scanners over the dev, prod and canary plans and the pinned dev stack's manifests,
    each tool started once for all of them."""
    base = tmp_path_factory.mktemp("scan")
    plans = {}
    for label, stack, raw in [*((s, s, stack_raw(s)) for s in STACKS),
                              (PINNED, "dev", pinned(stack_raw("dev")))]:  # fmt: skip
        plan = make_plan(write_project(base / label / "project", raw, stack), stack,
                         base / label / "plan")  # fmt: skip
        plans[label] = Scanned(stack, None if label == PINNED else plan.run, plan.manifests)
    return scan(plans, base / "scan")


@pytest.fixture(scope="module")
def findings(scanned):
    return sorted({f for stack in STACKS for f in scanned[stack]})


@pytest.mark.long
@pytest.mark.xdist_group("scanners")
def test_every_finding_is_fixed_or_reviewed(findings):
    new = [str(f) for f in findings if is_reviewed(f) is None]
    assert not new, "findings not in tests/security/reviewed.yaml:\n  " + "\n  ".join(new)


@pytest.mark.long
@pytest.mark.xdist_group("scanners")
def test_every_reviewed_resource_still_has_its_finding(findings):
    """Each name of each entry, not just the entry: a resource that no longer has the finding
    (or no longer exists) leaves the list."""
    found = {(f.tool, f.check, f.resource) for f in findings}
    stale = [
        f"{e['tool']} {e['check']} {name}"
        for e in reviewed()
        for name in e["resources"]
        if (e["tool"], e["check"], name) not in found
    ]
    assert not stale, f"reviewed.yaml names resources without that finding any more: {stale}"


@pytest.mark.long
@pytest.mark.xdist_group("scanners")
def test_a_stack_with_every_image_pinned_has_no_image_finding(scanned):
    """CKV_K8S_43 (image without digest) and CKV_K8S_15 (pull policy, moot with a digest) are
    reviewed for the repo's stacks, which run their images by tag (hyperpod-dpd-images-by-digest
    says so); pinned as `hyperpod-dpd fetch --stack` prints, the Job has neither."""
    assert any(f.check == "CKV_K8S_43" for f in scanned["dev"])  # the unpinned one has it
    checks = {f.check for f in scanned[PINNED]}
    assert checks and not checks & {"CKV_K8S_43", "CKV_K8S_15"}, checks
