"""hyperpod-dpd-single-az: all GPU capacity in one subnet of one AZ; the endpoint keeps sameAZ."""

from __future__ import annotations

from policies.rules import views
from policies.rules.base import Finding, Rule

SUBNET_TYPE = "aws:ec2/subnet:Subnet"


def check(resources, limits):
    subnets = set()
    for cluster, group in views.gpu_groups(resources):
        override = (group.get("overrideVpcConfig") or {}).get("subnets")
        name = group.get("instanceGroupName")
        if not override:
            yield Finding(
                cluster.urn,
                f"GPU instance group {name} has no overrideVpcConfig: it would inherit the "
                "cluster's multi-AZ subnets; pin it to the GPU subnet of "
                "hyperpod-dpd:availabilityZoneId",
            )
            continue
        if len(override) != 1:
            yield Finding(
                cluster.urn,
                f"GPU instance group {name} spans {len(override)} subnets; EFA RDMA needs all "
                "prefill and decode nodes in one AZ: use the single GPU subnet",
            )
        if any(views.unknown(s) for s in override):
            yield views.unchecked(cluster.urn, f"the subnet of GPU instance group {name}")
        subnets.update(s for s in override if views.known(s))
    if len(subnets) > 1:
        yield Finding(
            next(c for c, _ in views.gpu_groups(resources)).urn,
            f"GPU instance groups use {len(subnets)} different subnets ({', '.join(sorted(subnets))}); "
            "all must share the one GPU subnet of hyperpod-dpd:availabilityZoneId",
        )
    azs = {
        r.props.get("availabilityZoneId")
        for r in views.of_type(resources, SUBNET_TYPE)
        if (r.props.get("tags") or {}).get("hyperpod-dpd:tier") == "gpu"
    }
    if len(azs) > 1:
        yield Finding(
            next(r for r in views.of_type(resources, SUBNET_TYPE)).urn,
            f"GPU subnets in several AZs ({', '.join(sorted(map(str, azs)))}); keep one "
            "(hyperpod-dpd:availabilityZoneId)",
        )
    for iec in views.endpoints(resources):
        topology = (views.pd_spec(iec) or {}).get("topologySpec") or {}
        if views.pd_spec(iec) is not None and topology.get("sameAZ") is False:
            yield Finding(
                iec.urn,
                "pdSpec.topologySpec.sameAZ is false: prefill and decode pods may land in "
                "different AZs and KV transfers leave EFA; remove the override",
            )


RULE = Rule(
    "hyperpod-dpd-single-az",
    "GPU instance groups share one subnet in one AZ; the endpoint keeps sameAZ",
    "mandatory",
    check,
)
