"""`hyperpod-dpd diff`'s coherent-change finding: an in-place change of what a DPD
endpoint's two pools must agree on (image, model or revision, a role's TP, KV settings...) is
named with its hazard and the runbook's answer; replicas or `traffic` alone are not; prod's
policy (advisoriesMandatory) makes it mandatory and `diff` then exits 1."""

from __future__ import annotations

import json

import pytest

from core.versions import DLC_VLLM_IMAGE, LMCACHE_VLLM_IMAGE
from core.vocabulary import COHERENT_CHANGE_RULE
from hyperpod_dpd.cli import main
from hyperpod_dpd.diff.coherent import ANSWER, HAZARD, image_change, paired_fields
from hyperpod_dpd.diff.compare import diff_plans, load_plan
from hyperpod_dpd.diff.render import render_json, render_markdown, render_text
from hyperpod_dpd.plan.planner import make_plan
from tests.conftest import ROOT
from tests.hyperpod_dpd.diff.test_diff import base, head_with  # noqa: F401 (the fixture)

REVISION = "6f6073b423013f6a7d4d9f39144961bfbfbc386b"
NEW = "0123456789abcdef0123456789abcdef01234567"
NEW_REVISION = ("    revision: " + REVISION, "    revision: " + NEW)
NEW_IMAGE = (
    "    model: llama-3.3-70b\n    tensorParallelSize: 8\n",
    f"    model: llama-3.3-70b\n    image: {LMCACHE_VLLM_IMAGE}\n    tensorParallelSize: 8\n",
)
MORE_DECODE = (
    ("    decode:\n      replicas: 1\n", "    decode:\n      replicas: 2\n"),
    (
        "      instanceType: ml.p5.48xlarge\n      instanceCount: 1\n      role: decode",
        "      instanceType: ml.p5.48xlarge\n      instanceCount: 2\n      role: decode",
    ),
)


def test_a_new_revision_in_place_is_named_with_its_hazard_and_answer(base, tmp_path):  # noqa: F811
    d = diff_plans(load_plan(base), load_plan(head_with(tmp_path, NEW_REVISION)))
    (change,) = d.coherent
    assert change.endpoint == "inference/llama-3-3-70b" and change.level == "advisory"
    assert list(change.fields) == ["checkpoint"]
    before, after = change.fields["checkpoint"]
    assert before.endswith(REVISION) and after.endswith(NEW)
    markdown = render_markdown(d)
    assert f"**Advisory, coherent change (`{COHERENT_CHANGE_RULE}`):**" in markdown
    assert HAZARD in markdown and ANSWER in markdown
    assert "ADVISORY coherent change" in render_text(d)
    (shown,) = json.loads(render_json(d))["coherentChanges"]
    assert shown["enforcement"] == "advisory" and "checkpoint" in shown["fields"]
    assert main(["diff", str(base), str(tmp_path / "head"), "--format", "text"]) == 0


def test_a_new_image_in_place_is_named(base, tmp_path):  # noqa: F811
    d = diff_plans(load_plan(base), load_plan(head_with(tmp_path, NEW_IMAGE)))
    (change,) = d.coherent
    assert change.fields == {
        "image": ("public.ecr.aws/deep-learning-containers/vllm:server-hyperpod-cuda-v1.1",
                  LMCACHE_VLLM_IMAGE),
    }  # fmt: skip


def test_pinning_the_same_tag_by_digest_is_a_change_and_says_what_it_is(base, tmp_path):  # noqa: F811
    pinned = f"{DLC_VLLM_IMAGE}@sha256:{'ab' * 32}"
    head = head_with(tmp_path, (NEW_IMAGE[0], NEW_IMAGE[0] + f"    image: {pinned}\n"))
    (change,) = diff_plans(load_plan(base), load_plan(head)).coherent
    before, after = change.fields["image"]
    assert before == DLC_VLLM_IMAGE and after.startswith(f"{pinned} (the same tag, now pinned")
    assert "which is the running pods' build only if the tag has not moved" in after
    assert image_change(pinned, DLC_VLLM_IMAGE).startswith("the same tag, its digest dropped")
    assert image_change(pinned, f"{DLC_VLLM_IMAGE}@sha256:{'cd' * 32}") == (
        "the same tag, another digest: another build"
    )
    assert image_change(DLC_VLLM_IMAGE, LMCACHE_VLLM_IMAGE) is None  # another image: no note
    # Docker Hub's domain written on one side only: still the same tag.
    assert image_change(
        LMCACHE_VLLM_IMAGE, f"docker.io/{LMCACHE_VLLM_IMAGE}@{'sha256:' + 'ab' * 32}"
    )


def test_more_replicas_get_no_coherent_change(base, tmp_path):  # noqa: F811
    d = diff_plans(load_plan(base), load_plan(head_with(tmp_path, *MORE_DECODE)))
    assert d.changed and d.coherent == []
    assert "coherent change" not in render_markdown(d)


def test_a_traffic_shift_alone_gets_no_coherent_change(tmp_path):
    (tmp_path / "a").mkdir()
    before = tmp_path / "a" / "plan"
    make_plan(ROOT, "canary", before)
    after = head_with(
        tmp_path,
        ("    baseline: 95\n    candidate: 5", "    baseline: 50\n    candidate: 50"),
        stack="canary",
    )
    d = diff_plans(load_plan(before), load_plan(after))
    assert d.changed and d.coherent == []


def test_on_prod_the_policy_makes_it_mandatory_and_diff_exits_1(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    before = tmp_path / "a" / "plan"
    make_plan(ROOT, "prod", before)
    after = head_with(tmp_path / "b", NEW_REVISION, stack="prod")
    d = diff_plans(load_plan(before), load_plan(after))
    (change,) = d.coherent
    assert change.level == "mandatory" and d.mandatory_failures == [change]
    assert f"**Mandatory, coherent change (`{COHERENT_CHANGE_RULE}`):**" in render_markdown(d)
    assert main(["diff", str(before), str(after)]) == 1


@pytest.mark.parametrize(
    "policy, level",
    [
        ({"enforcement": {COHERENT_CHANGE_RULE: "mandatory"}}, "mandatory"),
        ({"advisoriesMandatory": True, "enforcement": {COHERENT_CHANGE_RULE: "advisory",
          "hyperpod-dpd-images-by-digest": "advisory"}}, "advisory"),
        ({"enforcement": {COHERENT_CHANGE_RULE: "disabled"}}, None),
    ],
)  # fmt: skip
def test_the_stack_policy_sets_the_level(base, tmp_path, policy, level):  # noqa: F811
    block = "  hyperpod-dpd:policy:\n" + "".join(
        f"    {k}: {json.dumps(v)}\n" for k, v in policy.items()
    )
    marker = "  hyperpod-dpd:endpoint:\n"
    after = head_with(tmp_path, NEW_REVISION, (marker, block + marker))
    d = diff_plans(load_plan(base), load_plan(after))
    assert [c.level for c in d.coherent] == ([level] if level else [])


def test_the_fields_read_each_roles_merged_args_and_connector_environment():
    spec = {
        "modelName": "m",
        "modelSourceConfig": {"modelLocation": "models/x/rev"},
        "worker": {
            "image": "img",
            "args": ["--tensor-parallel-size", "8", "--dtype", "bfloat16"],
            "environmentVariables": [
                {"name": "PYTHONHASHSEED", "value": "0"},
                {"name": "HF_HOME", "value": "/tmp"},
            ],
        },
        "pdSpec": {
            "prefillSpec": {"args": ["--kv-cache-dtype=fp8"]},
            "decodingSpec": {
                "args": ["--tensor-parallel-size=4"],
                "environmentVariables": [{"name": "LMCACHE_CHUNK_SIZE", "value": "256"}],
            },
        },
    }
    fields = paired_fields(spec)
    assert fields["prefill --tensor-parallel-size"] == "8"
    assert fields["decode --tensor-parallel-size"] == "4"
    assert fields["prefill --kv-cache-dtype"] == "fp8" and fields["decode --kv-cache-dtype"] is None
    assert (
        fields["decode LMCACHE_CHUNK_SIZE"] == "256" and "prefill LMCACHE_CHUNK_SIZE" not in fields
    )
    assert "decode HF_HOME" not in fields  # nothing a transfer depends on
    assert paired_fields({"worker": {}}) is None  # colocated: no pdSpec
