"""hyperpod-dpd-hash-seed: PYTHONHASHSEED fixed, so prefill and decode compute the same LMCache
keys. Unset or random, every decoder lookup misses: 'Retrieved 0 out of N' and silent
recomputation (LMCache/LMCache#2511; AWS DPD troubleshooting, "KV cache transfer issues").
Worker env applies to both roles alike."""

from __future__ import annotations

from policies.rules import views
from policies.rules.base import Finding, Rule


def check(resources, limits):
    for iec in views.endpoints(resources):
        if views.pd_spec(iec) is None:
            continue
        seed = views.env(iec).get("PYTHONHASHSEED")
        if seed is None:
            yield Finding(
                iec.urn,
                "PYTHONHASHSEED is not set: prefill and decode hash KV cache keys differently and "
                "the decoder recomputes every prompt; set "
                f'{views.endpoint_key(iec, "environmentVariables", "PYTHONHASHSEED")} to "0"',
            )
        elif not (isinstance(seed, str) and seed.isdigit()):
            yield Finding(
                iec.urn,
                f"PYTHONHASHSEED is {seed!r}, not a fixed integer; set "
                f'{views.endpoint_key(iec, "environmentVariables", "PYTHONHASHSEED")} to "0"',
            )


RULE = Rule("hyperpod-dpd-hash-seed", "PYTHONHASHSEED fixed for both roles", "mandatory", check)
