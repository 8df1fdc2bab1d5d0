"""The traffic split's targets: one target group per endpoint, bound to the endpoint's router
Service by a TargetGroupBinding of the AWS Load Balancer Controller (its CRD
`elbv2.k8s.aws/v1beta1`), which registers the router pods as targets (specs/traffic/__init__.py says why
not an Ingress)."""

from __future__ import annotations

from core.refs import ref
from core.vocabulary import ROUTER_HEALTH_PATH, TRAFFIC_SPLIT, RouterService, target_group_name
from settings.stack import StackSettings
from specs.base import Desired

TARGET_GROUP_TYPE = "aws:lb/targetGroup:TargetGroup"
TARGET_GROUP_BINDING_TYPE = "kubernetes:elbv2.k8s.aws/v1beta1:TargetGroupBinding"


def target_groups(
    name: str, s: StackSettings, vpc_id: str, tags: dict[str, str]
) -> tuple[dict[str, Desired], dict[str, Desired]]:
    """Per endpoint key of `s.traffic`, in key order: its target group and the binding of its
    router Service to it; `vpc_id` is a placeholder."""
    parents = (TRAFFIC_SPLIT,)
    by_key = {x.key: x.config for x in s.entries()}
    groups, bindings = {}, {}
    for key in sorted(s.traffic):
        e = by_key[key]
        router = RouterService(e.name, e.namespace)
        # The router speaks plain HTTP on its Service port 443 (core/vocabulary.py ROUTER_PORT):
        # the hop from the balancer to it stays in the VPC, between the split's security group and
        # the nodes' (specs/traffic/__init__.py).
        tg = Desired(
            TARGET_GROUP_TYPE,
            target_group_name(name, key),
            parents,
            {
                "targetType": "ip",
                "protocol": "HTTP",
                "port": router.port,
                "vpcId": vpc_id,
                "healthCheck": {"path": ROUTER_HEALTH_PATH, "protocol": "HTTP", "matcher": "200"},
                "tags": {**tags, "hyperpod-dpd:endpoint": key},
            },
            autoname="name",
        )
        groups[key] = tg
        bindings[key] = Desired(
            TARGET_GROUP_BINDING_TYPE,
            f"{name}-{key}-binding",
            parents,
            {
                "apiVersion": "elbv2.k8s.aws/v1beta1",
                "kind": "TargetGroupBinding",
                # A TargetGroupBinding names a Service of its own namespace: the router's.
                "metadata": {"name": f"traffic-{key}"[:63], "namespace": router.namespace},
                "spec": {
                    "serviceRef": {"name": router.name, "port": router.port},
                    "targetGroupARN": ref(tg.name, "arn"),
                    "targetType": "ip",
                },
            },
        )
    return groups, bindings
