"""hyperpod-dpd-autoscaling-capacity (policies/rules/endpoint/autoscaling_capacity.py), an advisory: a
pool's target above what `advise --write` recorded one replica holds within the SLO, read from the
manifest (the pool's own trigger and the `slo-capacity-<pool>` annotation) as the pack reads it."""

from __future__ import annotations

import json

from settings import parse_settings
from specs.endpoint import policy_annotations
from tests.conftest import edit, stack_raw
from tests.fix_hints.edits import suggestions
from tests.policies.conftest import iec_spec, named, recorded
from tests.policies.rules.helpers import IEC_URN, findings

RULE = "hyperpod-dpd-autoscaling-capacity"
WITHIN = "TPOT p50 <= 15 ms at ISL 4096 / OSL 256; concurrency 8, 16, 32 (aisimulate 0.13.0)"


def _scaled(views, target, capacity=24.0, pair=False):
    own = {"name": "llama-3-3-70b-decode", "query": "sum(...)", "targetValue": target,
           "metricType": "Average"}  # fmt: skip
    decode = {"minReplicaCount": 1, "maxReplicaCount": 2}
    if pair:  # the pair's trigger is first: the rule finds the pool's own by its name
        paired = {"name": "llama-3-3-70b-decode-pair", "query": "(...) * 2 / 1",
                  "targetValue": 1, "metricType": "Average"}  # fmt: skip
        decode["prometheusTriggerList"] = [paired, own]
    else:
        decode["prometheusTrigger"] = own
    iec_spec(views)["pdSpec"]["autoScalingSpec"] = {"decodingAutoScaling": decode}
    if capacity is not None:
        record = {"metric": "running-requests", "perReplica": capacity, "within": WITHIN}
        notes = named(views, "endpoint-iec").props["metadata"]["annotations"]
        notes["hyperpod-dpd/slo-capacity-decode"] = json.dumps(record)
    return views


def test_a_target_above_the_recorded_capacity_is_named_with_it(dev):
    [(urn, message)] = findings(RULE, _scaled(dev, 30))
    assert urn == IEC_URN
    assert message.startswith(
        "the decode pool's target 30 is above the 24 running-requests per replica that "
        f"`hyperpod-dpd advise` recorded one replica holds within {WITHIN}: "
    )
    [edits] = suggestions(message)
    assert [(e.key, e.value) for e in edits] == [
        ("hyperpod-dpd:endpoint.autoscaling.decode.target", 24)
    ]


def test_the_pools_own_trigger_is_judged_in_a_list_not_the_pairs():
    assert len(findings(RULE, _scaled(recorded(), 30, pair=True))) == 1
    assert findings(RULE, _scaled(recorded(), 24, pair=True)) == []  # the pair's 1: no target


def test_a_target_within_the_capacity_or_none_recorded_is_not_judged():
    assert findings(RULE, _scaled(recorded(), 24)) == []
    assert findings(RULE, _scaled(recorded(), 30, capacity=None)) == []
    assert findings(RULE, recorded()) == []


def test_the_settings_render_the_capacity_as_the_annotation_the_rule_reads():
    raw = stack_raw("dev")
    edit(raw, "hyperpod-dpd:endpoint.autoscaling", {"decode": {
        "maxReplicas": 1, "metric": "running-requests", "target": 30,
        "capacity": {"metric": "running-requests", "perReplica": 24, "within": WITHIN},
    }})  # fmt: skip
    notes = policy_annotations(parse_settings(raw))
    assert json.loads(notes["hyperpod-dpd/slo-capacity-decode"]) == {
        "metric": "running-requests", "perReplica": 24.0, "within": WITHIN,
    }  # fmt: skip
