"""hyperpod-dpd-model-size (policies/rules/endpoint/model_size.py), an advisory: a model too small
for DPD to beat colocated serving."""

from __future__ import annotations

from tests.policies.conftest import named
from tests.policies.rules.helpers import IEC_URN, findings


def test_small_model(dev):
    named(dev, "endpoint-iec").props["metadata"]["annotations"]["hyperpod-dpd/sizing-model"] = (
        "llama-3.1-8b"
    )
    assert findings("hyperpod-dpd-model-size", dev) == [
        (
            IEC_URN,
            "llama-3.1-8b is a 8B dense model: DPD rarely beats colocated serving below dense "
            "70B; benchmark both (hyperpod-dpd:endpoint.mode)",
        )
    ]
