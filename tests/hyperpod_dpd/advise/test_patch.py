"""The patch `advise --write` writes changes only what the layout changes, keeps the file's
layout, and plans with no advisory of the tool's own."""

from __future__ import annotations

import shutil

import yaml

from hyperpod_dpd.advise import patch
from hyperpod_dpd.advise.search import Layout
from hyperpod_dpd.plan.planner import make_plan
from tests.conftest import ROOT
from tests.pinned_images import beside_tags


def _project(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    for name in ("Pulumi.yaml", "__main__.py", "Pulumi.dev.yaml"):
        shutil.copy(ROOT / name, project / name)
    return project


def _apply(project, layout):
    path = project / "Pulumi.dev.yaml"
    config = yaml.safe_load(path.read_text())["config"]
    groups = config["hyperpod-dpd:instanceGroups"]
    change = patch.changes(patch.config_patch(layout, "ml.p5.48xlarge", groups, None), config)
    patch.write(path, change)
    return change


def _pool_args(plan):
    [iec] = [m for m in plan.manifests.values() if m["kind"] == "InferenceEndpointConfig"]
    return iec["spec"]


def test_two_prefillers_route_round_robin_and_the_decoder_is_untouched(tmp_path):
    project = _project(tmp_path)
    before = make_plan(project, "dev", tmp_path / "before")
    original = (project / "Pulumi.dev.yaml").read_text()
    change = _apply(project, Layout("dpd", replicas=2, tp=8, decode_replicas=1, decode_tp=8))
    # Only what 2P1D TP8/TP8 changes from the dev stack's 1P1D TP8/TP8.
    assert change == {
        "hyperpod-dpd:instanceGroups": {"prefill": {"instanceCount": 2}},
        "hyperpod-dpd:endpoint": {"prefill": {"replicas": 2}, "routingStrategy": "roundrobin"},
    }
    after = make_plan(project, "dev", tmp_path / "after")
    assert beside_tags(after.violations) == [], [v.message for v in after.violations]
    spec_before, spec_after = _pool_args(before), _pool_args(after)
    assert spec_before["worker"] == spec_after["worker"]  # the decode pool runs as it did
    text = (project / "Pulumi.dev.yaml").read_text()
    changed = [
        (a, b) for a, b in zip(original.splitlines(), text.splitlines(), strict=False) if a != b
    ]
    assert changed == [("      instanceCount: 1", "      instanceCount: 2"),
                       ("    routingStrategy: prefixaware", "    routingStrategy: roundrobin"),
                       ("      replicas: 1", "      replicas: 2")]  # fmt: skip


def test_the_layout_the_stack_already_runs_changes_nothing(tmp_path):
    project = _project(tmp_path)
    original = (project / "Pulumi.dev.yaml").read_text()
    assert _apply(project, Layout("dpd", replicas=1, tp=8, decode_replicas=1, decode_tp=8)) == {}
    assert (project / "Pulumi.dev.yaml").read_text() == original


def test_a_prefill_tp_of_its_own_is_written_only_when_it_differs():
    keys = patch.endpoint_keys(Layout("dpd", replicas=1, tp=4, decode_replicas=1, decode_tp=8))
    assert keys["tensorParallelSize"] == 8
    assert keys["prefill"]["tensorParallelSize"] == 4
    assert keys["decode"]["tensorParallelSize"] is None
