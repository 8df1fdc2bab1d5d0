"""hyperpod-dpd-images-by-digest (policies/rules/security/images_by_digest.py): every image the
stack runs by tag alone is named with the key that pins it; pinned stacks pass; a stack can make
it mandatory or keep it advisory under advisoriesMandatory."""

from __future__ import annotations

from core.versions import DLC_VLLM_IMAGE, JOB_PYTHON_IMAGE
from policies.rules import evaluate
from tests.policies.conftest import iec_spec, named, recorded
from tests.policies.rules.helpers import IEC_URN, RULES, findings
from tests.support.pinned_images import TEST_DIGEST

RULE = "hyperpod-dpd-images-by-digest"


def _job_image(views) -> dict:
    (container,) = named(views, "checkpoint-job").props["spec"]["template"]["spec"]["containers"]
    return container


def test_every_image_run_by_tag_is_named_with_its_key_and_the_digest_form(dev):
    iec_spec(dev)["worker"]["image"] = DLC_VLLM_IMAGE
    _job_image(dev)["image"] = JOB_PYTHON_IMAGE
    found = findings(RULE, dev)
    assert [urn for urn, _ in found] == [IEC_URN, named(dev, "checkpoint-job").urn]
    worker, job = (message for _, message in found)
    assert worker.startswith(f"image {DLC_VLLM_IMAGE} runs by tag alone")
    assert "pin hyperpod-dpd:endpoint.image by digest" in worker
    # The command that sets the nested key of this stack (a pasted `KEY: value` line would be a new
    # top-level key the stack file cannot hold; without --stack it acts on the selected stack).
    assert (
        f"pulumi config set --stack dev --path 'hyperpod-dpd:endpoint.image' "
        f"'{DLC_VLLM_IMAGE}@sha256:<64 hex digits>'" in worker
    )
    assert "`hyperpod-dpd fetch --stack dev` prints the command" in worker
    assert (
        f"pulumi config set --stack dev --path 'hyperpod-dpd:jobs.image' "
        f"'{JOB_PYTHON_IMAGE}@sha256:<64 hex digits>'" in job
    )
    assert RULES[RULE].enforcement == "advisory"


def test_silent_when_every_image_is_pinned(dev):
    assert iec_spec(dev)["worker"]["image"] == f"{DLC_VLLM_IMAGE}@{TEST_DIGEST}"
    assert _job_image(dev)["image"] == f"{JOB_PYTHON_IMAGE}@{TEST_DIGEST}"
    assert findings(RULE, dev) == []
    iec_spec(dev)["worker"]["image"] = f"lmcache/vllm-openai@{TEST_DIGEST}"  # no tag: pinned
    assert findings(RULE, dev) == []


def test_the_repo_stacks_run_their_images_by_tag_and_it_is_the_only_finding():
    """No registry is reachable here to resolve the documented images' digests: the repo's
    stacks keep the tags and this advisory says so, each image once, on each stack."""
    for stack, keys in {
        "dev": {"hyperpod-dpd:endpoint.image", "hyperpod-dpd:jobs.image"},
        "canary": {"hyperpod-dpd:endpoints.baseline.image",
                   "hyperpod-dpd:endpoints.candidate.image", "hyperpod-dpd:jobs.image"},
    }.items():  # fmt: skip
        found = evaluate(recorded(stack, by_tag=True))
        assert {v.policy for v in found} == {RULE}, stack
        assert {v.message.split(" by digest")[0].rsplit(" ", 1)[1] for v in found} == keys


def test_a_stack_makes_it_mandatory_or_keeps_it_advisory_among_mandatory_advisories():
    views = recorded("dev", by_tag=True)
    levels = {v.enforcement for v in evaluate(views, enforcement={RULE: "mandatory"})}
    assert levels == {"mandatory"}
    assert {v.enforcement for v in evaluate(views, advisories_mandatory=True)} == {"mandatory"}
    kept = evaluate(views, enforcement={RULE: "advisory"}, advisories_mandatory=True)
    assert {v.enforcement for v in kept} == {"advisory"}
