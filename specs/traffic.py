"""One stable URL in front of several endpoints, split by weight (`hyperpod-dpd:traffic`).

An internal Application Load Balancer (private subnets, reachable from the VPC only) whose one
listener forwards to one target group per endpoint, by weight. Each target group is bound to the
endpoint's router Service by a TargetGroupBinding of the AWS Load Balancer Controller the
operator add-on installs (its CRD `elbv2.k8s.aws/v1beta1`), which registers the router pods as
targets. An Ingress could not do this: its weighted forward names Services of its own namespace
only (controller docs, ingress annotations), and endpoints live in their own.

The Service is the router the operator creates for every endpoint with intelligent routing
(core/vocabulary.py RouterService, where its sources are cited; `hyperpod-dpd verify` checks it
exists before any weight moves). Moving weights changes the listener only: shifting and rolling
back never touch an InferenceEndpointConfig, so no pod restarts.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.refs import ref
from core.vocabulary import (
    CHAT_COMPLETIONS_PATH,
    ROUTER_HEALTH_PATH,
    SECURITY_GROUP_TYPE,
    SG_EGRESS_TYPE,
    SG_INGRESS_TYPE,
    TRAFFIC_SPLIT,
    RouterService,
    target_group_name,
)
from settings.stack import StackSettings
from specs.base import Desired

LOAD_BALANCER_TYPE = "aws:lb/loadBalancer:LoadBalancer"
TARGET_GROUP_TYPE = "aws:lb/targetGroup:TargetGroup"
LISTENER_TYPE = "aws:lb/listener:Listener"
TARGET_GROUP_BINDING_TYPE = "kubernetes:elbv2.k8s.aws/v1beta1:TargetGroupBinding"
LISTENER_PORT = 80
CHAT_PATH = CHAT_COMPLETIONS_PATH


@dataclass(frozen=True)
class TrafficSpec:
    name: str
    security_group: Desired
    rules: tuple[Desired, ...]
    load_balancer: Desired
    target_groups: dict[str, Desired]  # endpoint key -> its target group
    bindings: dict[str, Desired]  # endpoint key -> TargetGroupBinding of its router Service
    listener: Desired

    def resources(self) -> list[Desired]:
        return [
            self.security_group,
            *self.rules,
            self.load_balancer,
            *self.target_groups.values(),
            *self.bindings.values(),
            self.listener,
        ]


def traffic_split(
    name: str, s: StackSettings, vpc_id: str, subnet_ids: str, tags: dict[str, str]
) -> TrafficSpec | None:
    """The split of `s.traffic` (None without one); `vpc_id` and `subnet_ids` are placeholders."""
    if not s.traffic:
        return None
    parents = (TRAFFIC_SPLIT,)
    group = Desired(
        SECURITY_GROUP_TYPE,
        f"{name}-sg",
        parents,
        {
            "vpcId": vpc_id,
            # EC2 takes no apostrophe here (core/aws_rules.py), and never changes a group's
            # description: a new one replaces the group.
            "description": "Internal load balancer of the endpoints: HTTP from the VPC only",
            "tags": {**tags, "Name": f"{name}-sg"},
        },
    )
    own = ref(group.name, "id")
    vpc = s.network.vpc_cidr
    rules = (
        Desired(SG_INGRESS_TYPE, f"{name}-ingress-vpc", parents, {
            "securityGroupId": own, "ipProtocol": "tcp", "fromPort": LISTENER_PORT,
            "toPort": LISTENER_PORT, "cidrIpv4": vpc, "description": "clients in the VPC",
        }),
        Desired(SG_EGRESS_TYPE, f"{name}-egress-vpc", parents, {
            "securityGroupId": own, "ipProtocol": "tcp", "fromPort": 0, "toPort": 65535,
            "cidrIpv4": vpc, "description": "to the router pods (targets by IP)",
        }),
    )  # fmt: skip
    by_key = {x.key: x.config for x in s.entries()}
    alb = Desired(
        LOAD_BALANCER_TYPE,
        f"{name}-alb",
        parents,
        {
            "internal": True,  # no internet-facing entry point: reached from the VPC
            "loadBalancerType": "application",
            "subnets": subnet_ids,
            "securityGroups": [own],
            "dropInvalidHeaderFields": True,
            # A non-streaming answer arrives whole at the end of its generation: the longest
            # of the endpoints' (settings/endpoint.py idleTimeoutSeconds), not ALB's 60 s.
            "idleTimeout": max(by_key[k].idle_timeout_seconds for k in s.traffic),
            "tags": tags,
        },
        autoname="name",
    )
    groups, bindings = {}, {}
    for key in sorted(s.traffic):
        e = by_key[key]
        router = RouterService(e.name, e.namespace)
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
    listener = Desired(
        LISTENER_TYPE,
        f"{name}-listener",
        parents,
        {
            "loadBalancerArn": ref(alb.name, "arn"),
            "port": LISTENER_PORT,
            "protocol": "HTTP",
            "defaultActions": [
                {
                    "type": "forward",
                    "forward": {
                        "targetGroups": [
                            {"arn": ref(groups[key].name, "arn"), "weight": weight}
                            for key, weight in sorted(s.traffic.items())
                        ]
                    },
                }
            ],
            "tags": tags,
        },
    )
    return TrafficSpec(name, group, rules, alb, groups, bindings, listener)
