"""hyperpod-dpd-autoscaling-capacity (advisory): an autoscaled pool whose target is above what
`hyperpod-dpd advise` recorded one replica holds within the SLO. KEDA holds each replica near its
target, so a target above that load holds every replica past the SLO before the pool scales out.

`advise --write` records the capacity beside the target it derives (`autoscaling.<pool>.capacity`,
rendered as the IEC's `hyperpod-dpd/slo-capacity-<pool>` annotation: specs/scaling.py); the rule
reads the annotation and the pool's own trigger from the manifest, as deployed, and never runs the
simulator. A pool without a recorded capacity is not judged.
"""

from __future__ import annotations

import json

from policies.rules import views
from policies.rules.base import Finding, Rule


def own_trigger(iec, pool: str, auto) -> dict | None:
    """The pool's trigger on its own signal: the single one, or the list's `<name>-<pool>`
    (the pair's trigger, `<name>-<pool>-pair`, holds it at the other pool's count instead)."""
    single = auto.get("prometheusTrigger")
    if isinstance(single, dict):
        return single
    name = f"{(iec.props.get('metadata') or {}).get('name')}-{pool}"
    listed = [t for t in auto.get("prometheusTriggerList") or [] if isinstance(t, dict)]
    return next((t for t in listed if t.get("name") == name), None)


def check(resources, limits):
    for iec in views.endpoints(resources):
        for pool, auto in views.scaled_pools(iec):
            note = views.annotation(iec, f"slo-capacity-{pool}")
            trigger = own_trigger(iec, pool, auto)
            if note is None or trigger is None:
                continue
            try:
                recorded = json.loads(note)
                capacity = float(recorded["perReplica"])
            except (ValueError, TypeError, KeyError):
                continue
            target = views.as_float(trigger.get("targetValue"))
            if target is None or target <= capacity:
                continue
            where = () if pool == "colocated" else (pool,)
            key = views.endpoint_key(iec, "autoscaling", *where, "target")
            yield Finding(
                iec.urn,
                f"the {pool} pool's target {target:g} is above the {capacity:g} "
                f"{recorded.get('metric', '')} per replica that `hyperpod-dpd advise` recorded one "
                f"replica holds within {recorded.get('within', 'the SLO')}: each replica runs "
                f"past the SLO before the pool scales out. Set {key} to at most {capacity:g}, or "
                "rerun advise (or a benchmark: `advise --measured RUN`) if the workload or the "
                "SLO changed",
            )


RULE = Rule(
    "hyperpod-dpd-autoscaling-capacity",
    "an autoscaled pool's target is no more than what advise recorded one replica holds within "
    "the SLO",
    "advisory",
    check,
)
