"""hyperpod-dpd-hash-seed (policies/rules/endpoint/hash_seed.py): PYTHONHASHSEED removed from the
worker env, or set to `random` instead of a fixed integer."""

from __future__ import annotations

from tests.policies.conftest import set_env
from tests.policies.rules.helpers import IEC_URN, findings


def test_hash_seed_removed(dev):
    set_env(dev, "PYTHONHASHSEED")
    assert findings("hyperpod-dpd-hash-seed", dev) == [
        (
            IEC_URN,
            "PYTHONHASHSEED is not set: prefill and decode hash KV cache keys differently and the "
            "decoder recomputes every prompt; set "
            'hyperpod-dpd:endpoint.environmentVariables.PYTHONHASHSEED to "0"',
        )
    ]


def test_hash_seed_random(dev):
    set_env(dev, "PYTHONHASHSEED", "random")
    assert findings("hyperpod-dpd-hash-seed", dev) == [
        (
            IEC_URN,
            "PYTHONHASHSEED is 'random', not a fixed integer; set "
            'hyperpod-dpd:endpoint.environmentVariables.PYTHONHASHSEED to "0"',
        )
    ]
