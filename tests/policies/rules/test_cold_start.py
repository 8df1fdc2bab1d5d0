"""hyperpod-dpd-cold-start (policies/rules/cold_start.py), an advisory: an autoscaled pool whose
new worker is ready later than the pool keeps replicas after a burst, with the caches off."""

from __future__ import annotations

from tests.fix_hints.edits import suggestions
from tests.policies.conftest import iec_spec
from tests.policies.rules.helpers import IEC_URN, findings

RULE = "hyperpod-dpd-cold-start"


def _autoscaled(views, stabilization=None):
    scaling = {"minReplicaCount": 1, "maxReplicaCount": 2}
    if stabilization is not None:
        scaling["scaleDownStabilizationTime"] = stabilization
    iec_spec(views)["pdSpec"]["autoScalingSpec"] = {"decodingAutoScaling": scaling}
    return views


def test_fixed_replicas_get_no_finding(dev):
    assert findings(RULE, dev) == []


def test_an_autoscaled_decode_pool_of_a_70b_without_caches_is_named(dev):
    [(urn, message)] = findings(RULE, _autoscaled(dev))
    assert urn == IEC_URN
    assert message.startswith(
        "the decode pool autoscales, but a new worker on ml.p5.48xlarge takes about 886 s to be "
        "ready (imagePull 267 s, weightsRead 601 s, loadToGpu 0 s, warmUp 18 s): longer than "
        "the 300 s the pool keeps replicas"
    )
    [edits] = suggestions(message)
    assert {(e.key, e.value) for e in edits} == {
        ("hyperpod-dpd:endpoint.cache.weights", True),
        ("hyperpod-dpd:endpoint.cache.image", True),
    }


def test_both_caches_or_a_long_enough_window_clear_it(dev):
    views = _autoscaled(dev)
    iec_spec(views)["modelCacheConfig"] = {
        "weightsCache": {"enabled": True, "hostPath": "/opt/dlami/nvme"},
        "imageCache": {"enabled": True},
    }
    assert findings(RULE, views) == []


def test_a_window_longer_than_the_start_clears_it(dev):
    assert findings(RULE, _autoscaled(dev, 900)) == []


def test_a_window_shorter_than_the_start_keeps_it(dev):
    assert len(findings(RULE, _autoscaled(dev, 880))) == 1


def test_the_image_cache_alone_still_leaves_the_s3_read(dev):
    views = _autoscaled(dev)
    iec_spec(views)["modelCacheConfig"] = {"imageCache": {"enabled": True}}
    [(_, message)] = findings(RULE, views)
    assert "imagePull 0 s, weightsRead 601 s" in message
