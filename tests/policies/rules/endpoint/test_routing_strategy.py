"""hyperpod-dpd-routing-strategy (policies/rules/endpoint/routing_strategy.py), an advisory: several
prefill replicas behind the prefixaware strategy."""

from __future__ import annotations

from tests.policies.conftest import iec_spec
from tests.policies.rules.helpers import IEC_URN, findings


def test_several_prefillers_with_prefixaware(dev):
    iec_spec(dev)["pdSpec"]["prefillSpec"]["replicas"] = 3
    assert findings("hyperpod-dpd-routing-strategy", dev) == [
        (
            IEC_URN,
            "3 prefill replicas with routingStrategy prefixaware: unless prompts share "
            "prefixes, set hyperpod-dpd:endpoint.routingStrategy to roundrobin",
        )
    ]
