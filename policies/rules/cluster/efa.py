"""hyperpod-dpd-efa: GPU groups have the EFA interface and a security group that lets all
traffic in from and out to itself (without the egress rule the EFA health check fails with
"Unresponsive receiver": awslabs/awsome-distributed-ai PR #259)."""

from __future__ import annotations

from policies.rules import views
from policies.rules.base import Finding, Rule

INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
EGRESS = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"


def _self_referencing(resources, type_) -> set[str]:
    return {
        r.props.get("securityGroupId")
        for r in views.of_type(resources, type_)
        if r.props.get("securityGroupId") == r.props.get("referencedSecurityGroupId")
        and str(r.props.get("ipProtocol")) == "-1"
    }


def check(resources, limits):
    ingress, egress = _self_referencing(resources, INGRESS), _self_referencing(resources, EGRESS)
    for cluster, group in views.gpu_groups(resources):
        name = group.get("instanceGroupName")
        interface = (group.get("networkInterface") or {}).get("interfaceType")
        if interface not in ("efa", "efa-only"):
            yield Finding(
                cluster.urn,
                f"GPU instance group {name} has no EFA network interface (got {interface!r}); "
                "KV transfers would fall back to TCP (< 1 GB/s): set interfaceType efa",
            )
        groups = (group.get("overrideVpcConfig") or {}).get("securityGroupIds") or []
        for sg in groups:
            if views.unknown(sg):
                yield views.unchecked(cluster.urn, f"security group of GPU instance group {name}")
                continue
            if not views.known(sg):
                continue
            missing = [
                d for d, ok in (("ingress", sg in ingress), ("egress", sg in egress)) if not ok
            ]
            if missing:
                yield Finding(
                    cluster.urn,
                    f"security group {sg} of GPU instance group {name} lacks a self-referencing "
                    f"all-traffic {' and '.join(missing)} rule; EFA needs both",
                )


RULE = Rule("hyperpod-dpd-efa", "EFA interface and self-referencing SG rules", "mandatory", check)
