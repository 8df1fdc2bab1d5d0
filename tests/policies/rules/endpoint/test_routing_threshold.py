"""hyperpod-dpd-routing-threshold (policies/rules/endpoint/routing_threshold.py): a threshold below
one LMCache chunk, and one at --max-model-len (nothing is ever disaggregated)."""

from __future__ import annotations

import pytest

from tests.policies.conftest import iec_spec
from tests.policies.rules.helpers import IEC_URN, findings


@pytest.mark.parametrize("threshold", [0, 255])
def test_threshold_below_one_chunk(dev, threshold):
    iec_spec(dev)["pdSpec"]["routingThreshold"] = threshold
    assert findings("hyperpod-dpd-routing-threshold", dev) == [
        (
            IEC_URN,
            f"routingThreshold {threshold} is below one LMCache chunk (256 tokens): short prompts "
            "on the disaggregated path can hang the decoder; set "
            "hyperpod-dpd:endpoint.routingThreshold to at least 256 (docs' default 4096)",
        )
    ]


def test_threshold_at_max_model_len(dev):
    iec_spec(dev)["pdSpec"]["routingThreshold"] = 16384
    assert findings("hyperpod-dpd-routing-threshold", dev) == [
        (
            IEC_URN,
            "routingThreshold 16384 >= --max-model-len 16384: no request is ever disaggregated; "
            "lower hyperpod-dpd:endpoint.routingThreshold to 4096 (docs' default 4096)",
        )
    ]
