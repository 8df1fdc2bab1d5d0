"""`hyperpod-dpd diff`'s advisory: one change to a DPD endpoint alters more than one of the
variables it is scaled by (one variable per iteration)."""

from __future__ import annotations

import json

from hyperpod_dpd.diff.compare import diff_plans, load_plan
from hyperpod_dpd.diff.iteration import REASON, variables
from hyperpod_dpd.diff.render import render_json, render_markdown, render_text
from tests.hyperpod_dpd.diff.test_diff import base, head_with  # noqa: F401 (the fixture)

PREFILL = "    prefill:\n      replicas: 1\n"
DECODE = "    decode:\n      replicas: 1\n"
# One node per replica: a second prefill replica needs a second prefill node (role-capacity).
GROUP = "      instanceType: ml.p5.48xlarge\n      instanceCount: 1\n      role: prefill"
MORE_PREFILL = (
    (PREFILL, PREFILL.replace("1", "2")),
    (GROUP, GROUP.replace("Count: 1", "Count: 2")),
)
TP4 = ("    tensorParallelSize: 8\n", "    tensorParallelSize: 4\n")


def test_one_variable_changed_gets_no_advisory(base, tmp_path):  # noqa: F811
    head = head_with(tmp_path, *MORE_PREFILL)
    d = diff_plans(load_plan(base), load_plan(head))
    assert "spec.pdSpec.prefillSpec.replicas" in d.changed[-1].paths and d.advisories == []
    assert "one variable per iteration" not in render_markdown(d)
    assert json.loads(render_json(d))["advisories"] == []


def test_prefill_replicas_and_decode_tp_together_are_named(tmp_path):
    # Both roles at TP 4, then the decoder at TP 8 (its own args) and a second prefill replica.
    decode = DECODE + "      args: ['--tensor-parallel-size', '8']\n"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    before = head_with(tmp_path / "a", TP4)
    after = head_with(tmp_path / "b", TP4, *MORE_PREFILL, (DECODE, decode))
    d = diff_plans(load_plan(before), load_plan(after))
    (advisory,) = d.advisories
    assert advisory.endpoint == "inference/llama-3-3-70b"
    assert list(advisory.variables) == ["prefill replicas", "TP/PP"]
    assert advisory.variables["prefill replicas"] == ("1", "2")
    assert advisory.variables["TP/PP"] == ("decode TP 4", "decode TP 8")
    markdown = render_markdown(d)
    assert "**Advisory, one variable per iteration:**" in markdown and REASON in markdown
    assert (
        "2 variables at once (prefill replicas: 1 -> 2; TP/PP: decode TP 4 -> decode TP 8)"
        in markdown
    )
    assert "ADVISORY one variable per iteration" in render_text(d)
    (shown,) = json.loads(render_json(d))["advisories"]
    assert shown["variables"]["TP/PP"] == {"base": "decode TP 4", "head": "decode TP 8"}


def test_a_colocated_endpoint_change_gets_no_advisory(tmp_path):
    colocated = ("    mode: dpd\n", "    mode: colocated\n")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    before = head_with(tmp_path / "a", colocated)
    # Replicas (one per node: 2 -> 3 needs a third node) and TP at once, on a colocated endpoint.
    after = head_with(tmp_path / "b", colocated, *MORE_PREFILL, TP4)
    d = diff_plans(load_plan(before), load_plan(after))
    paths = [p for c in d.changed if c.name == "endpoint-iec" for p in c.paths]
    assert "spec.replicas" in paths and "spec.worker.args[7]" in paths
    assert d.advisories == []


def test_the_variables_read_the_roles_merged_args_autoscaling_and_placement():
    spec = {
        "instanceType": "ml.p5.48xlarge",
        "worker": {
            "args": ["--tensor-parallel-size", "8", "--kv-transfer-config", "{}"],
            "environmentVariables": [{"name": "PD_BUFFER_SIZE", "value": "8"}],
        },
        "pdSpec": {
            "prefillSpec": {"replicas": 1, "args": ["--pipeline-parallel-size", "2"],
                            "nodeSelector": {"role": "prefill"}},
            "decodingSpec": {"replicas": 2, "args": ["--tensor-parallel-size=4"]},
            "autoScalingSpec": {"decodingAutoScaling": {"minReplicaCount": 1,
                                                        "maxReplicaCount": 4}},
            "topologySpec": {"sameAZ": True},
        },
    }  # fmt: skip
    v = variables(spec)
    assert v["decode replicas"] == {"replicas": 2, "min": 1, "max": 4}
    assert v["TP/PP"] == {"prefill TP": "8", "prefill PP": "2", "decode TP": "4", "decode PP": None}
    assert v["KV connector"]["decode PD_BUFFER_SIZE"] == "8"
    assert v["KV connector"]["prefill --kv-transfer-config"] == "{}"
    assert v["placement"]["prefill nodeSelector"] == {"role": "prefill"}
    assert variables({"worker": {}, "replicas": 2}) is None  # colocated
