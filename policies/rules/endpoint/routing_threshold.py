"""hyperpod-dpd-routing-threshold: at least one LMCache chunk (prompts shorter than 256 tokens
on the disaggregated path can hang the decoder; 0 disaggregates everything) and below
--max-model-len (or nothing is ever disaggregated)."""

from __future__ import annotations

from policies.rules import views
from policies.rules.base import Finding, Rule


def check(resources, limits):
    for iec in views.endpoints(resources):
        pd = views.pd_spec(iec)
        if pd is None:
            continue
        threshold = views.as_int(pd.get("routingThreshold", 4096))
        max_len = views.role_numbers(iec, "decode").max_model_len
        if threshold is None:
            continue
        if threshold < limits.min_routing_threshold:
            yield Finding(
                iec.urn,
                f"routingThreshold {threshold} is below one LMCache chunk "
                f"({limits.min_routing_threshold} tokens): short prompts on the disaggregated "
                f"path can hang the decoder; set {views.endpoint_key(iec, 'routingThreshold')} "
                f"to at least {limits.min_routing_threshold} (docs' default 4096)",
            )
        elif max_len is not None and threshold >= max_len:
            yield Finding(
                iec.urn,
                f"routingThreshold {threshold} >= --max-model-len {max_len}: no request is ever "
                f"disaggregated; lower {views.endpoint_key(iec, 'routingThreshold')} to "
                f"{4096 if max_len > 4096 else max_len // 2} (docs' default 4096)",
            )


RULE = Rule(
    "hyperpod-dpd-routing-threshold",
    "routingThreshold >= 256 and < max-model-len",
    "mandatory",
    check,
)
