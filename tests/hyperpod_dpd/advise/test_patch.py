"""The patch `advise --write` writes changes only what the layout changes, keeps the file's
layout, and plans with no advisory of the tool's own."""

from __future__ import annotations

import shutil

import yaml

from hyperpod_dpd.advise import patch
from hyperpod_dpd.advise.search import Layout
from hyperpod_dpd.plan.planner import make_plan
from tests.conftest import ROOT
from tests.support.pinned_images import beside_tags


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


def test_written_targets_plan_with_their_pair_and_one_comment_naming_the_workload(tmp_path):
    """A 1P2D layout's targets, written twice as `--write` writes them: one comment above the
    autoscaling, the endpoint's slo and mode as they were, and a plan with no advisory of the
    tool's own (scale-in waits for a new worker's start: no cold-start advisory) whose decode
    pool follows prefill by a second trigger; a target raised by hand past the capacity it
    recorded is then the plan's capacity advisory."""
    from hyperpod_dpd.advise.capacity import PoolCapacity
    from hyperpod_dpd.advise.scaling import Start, scaling

    project = _project(tmp_path)
    path = project / "Pulumi.dev.yaml"
    path.write_text(path.read_text() + "    slo:\n      ttftP50Ms: 400\n")
    layout = Layout("dpd", replicas=1, tp=8, decode_replicas=2, decode_tp=8)
    found = {
        "prefill": PoolCapacity("prefill", "prompt-tokens-per-second", 18400.0, 18400.0,
                                "TTFT p50 <= 500 ms", 24100.0),
        "decode": PoolCapacity("decode", "running-requests", 29.0, 26.0, "TPOT p50 <= 15 ms",
                               32.0),
    }  # fmt: skip
    start = Start("llama-3.3-70b", "ml.p5.48xlarge")  # no cache: about 886 s to start
    keys = scaling(layout, found, None, "ISL 4096 / OSL 256; concurrency 8 (aisimulate)", start)
    config = yaml.safe_load(path.read_text())["config"]
    groups = config["hyperpod-dpd:instanceGroups"]
    words = "(aisimulate 0.13.0) for 1P2D TP8/TP8: ISL 4096 / OSL 256; TTFT <= 500 ms"
    for _ in range(2):
        change = patch.changes(
            patch.config_patch(layout, "ml.p5.48xlarge", groups, None, keys.config_keys()),
            yaml.safe_load(path.read_text())["config"],
        )
        patch.write(path, change, (patch.endpoint_path(None), words))
    text = path.read_text()
    assert text.count(patch.COMMENT_START) == 1
    above = text.split("\n    autoscaling:\n")[0].splitlines()
    comment = [line for line in above if line.startswith("    # ")][-2:]  # wrapped at 100
    assert above[-2:] == comment and all(len(line) <= 100 for line in comment)
    assert " ".join(line[6:] for line in comment) == f"{patch.COMMENT_START} {words}"
    endpoint = yaml.safe_load(text)["config"]["hyperpod-dpd:endpoint"]
    assert endpoint["slo"] == {"ttftP50Ms": 400} and endpoint["mode"] == "dpd"
    assert endpoint["autoscaling"]["ratio"] == {"prefill": 1, "decode": 2}
    plan = make_plan(project, "dev", tmp_path / "plan")
    assert beside_tags(plan.violations) == [], [v.message for v in plan.violations]
    scaled = _pool_args(plan)["pdSpec"]["autoScalingSpec"]["decodingAutoScaling"]
    assert [t["name"] for t in scaled["prometheusTriggerList"]] == [
        "llama-3-3-70b-decode", "llama-3-3-70b-decode-pair"
    ]  # fmt: skip
    assert (scaled["minReplicaCount"], scaled["maxReplicaCount"]) == (2, 2)
    assert scaled["scaleDownStabilizationTime"] == 900
    # The plan reads what advise wrote: a target then raised by hand past the recorded capacity
    # (29 requests running per decode replica) is the capacity advisory, naming that record. The
    # batch is raised with it: at vLLM's 32 a target of 40 is never passed, which is refused.
    raised = yaml.safe_load(path.read_text())
    raised["config"]["hyperpod-dpd:endpoint"]["autoscaling"]["decode"]["target"] = 40
    raised["config"]["hyperpod-dpd:endpoint"]["decode"]["maxNumSeqs"] = 64
    path.write_text(yaml.safe_dump(raised))
    plan = make_plan(project, "dev", tmp_path / "raised")
    [advisory] = [v for v in plan.violations if v.policy == "hyperpod-dpd-autoscaling-capacity"]
    assert advisory.message.startswith(
        "the decode pool's target 40 is above the 29 running-requests per replica that "
        "`hyperpod-dpd advise` recorded one replica holds within TPOT p50 <= 15 ms at ISL 4096 "
    )


def test_an_endpoints_entry_written_with_more_nodes_than_its_groups_leave_it_plans(tmp_path):
    """The canary's candidate (1P1D on one prefill and one decode node) given 2P1D with its
    targets: the prefill group grows by the node it lacks, the pair's bounds fit, and the stack
    plans, the decode pool's maximum the pair's floor of prefill."""
    import argparse

    from hyperpod_dpd.advise.capacity import PoolCapacity
    from hyperpod_dpd.advise.scaling import Start, scaling
    from hyperpod_dpd.advise.setting import setting

    project = tmp_path / "project"
    project.mkdir()
    for name in ("Pulumi.yaml", "__main__.py", "Pulumi.canary.yaml"):
        shutil.copy(ROOT / name, project / name)
    args = argparse.Namespace(stack="canary", endpoint="candidate", instance_type=None,
                              model=None, write=True)  # fmt: skip
    where = setting(args, project)
    layout = Layout("dpd", replicas=2, tp=8, decode_replicas=1, decode_tp=8)
    assert where.grown(layout) == {"prefill": 2}  # 1 node, the layout's 2
    found = {
        "prefill": PoolCapacity("prefill", "prompt-tokens-per-second", 21300.0, 19700.0,
                                "TTFT p50 <= 1000 ms", 23700.0),
        "decode": PoolCapacity("decode", "running-requests", 29.0, 26.0, "TPOT p50 <= 15 ms",
                               32.0),
    }  # fmt: skip
    keys = scaling(layout, found, where.room, "ISL 4096 / OSL 256; concurrency 8 (aisimulate)",
                   Start("llama-3.3-70b", "ml.p5.48xlarge"))  # fmt: skip
    path = project / "Pulumi.canary.yaml"
    change = patch.changes(
        patch.config_patch(layout, "ml.p5.48xlarge", where.groups, where.endpoint_key,
                           keys.config_keys(), where.grown(layout)),
        yaml.safe_load(path.read_text())["config"],
    )  # fmt: skip
    assert change["hyperpod-dpd:instanceGroups"] == {"prefill": {"instanceCount": 2}}
    patch.write(path, change)
    plan = make_plan(project, "canary", tmp_path / "plan")
    assert not plan.stopped and beside_tags(plan.violations) == [], [
        v.message for v in plan.violations
    ]
    [iec] = [m for m in plan.manifests.values() if m["kind"] == "InferenceEndpointConfig"
             and m["metadata"]["name"] == "candidate"]  # fmt: skip
    scaled = iec["spec"]["pdSpec"]["autoScalingSpec"]["prefillAutoScaling"]
    assert (scaled["minReplicaCount"], scaled["maxReplicaCount"]) == (2, 2)
    assert [t["name"] for t in scaled["prometheusTriggerList"]] == [
        "candidate-prefill", "candidate-prefill-pair"
    ]  # fmt: skip
