"""The HyperPod nodes' security group: EFA needs all traffic to and from the group itself.

The EFA health check fails with "Unresponsive receiver" when the self-referencing *egress* rule
is missing, even with an allow-all egress rule (awslabs/awsome-distributed-ai PR #259,
gardener/gardener-extension-provider-aws #1832; the EC2 EFA guide's security group allows all
traffic to and from itself). Nothing else is let
in: no ingress from anywhere but the group itself, the EKS cluster security group and the VPC.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.refs import ref
from core.vocabulary import (
    NODE_SECURITY_GROUP,
    SECURITY_GROUP_TYPE,
    SG_EGRESS_TYPE,
    SG_INGRESS_TYPE,
)
from specs.base import Desired


@dataclass(frozen=True)
class NodeSecurityGroupSpec:
    name: str
    group: Desired
    rules: tuple[Desired, ...]

    @property
    def id(self) -> str:
        return ref(self.group.name, "id")


def node_security_group(
    name: str, vpc_cidr: str, vpc_id: str, cluster_security_group_id: str, tags: dict[str, str]
) -> NodeSecurityGroupSpec:
    """The group `{name}-sg` and its rules, each a separate resource (rules inline in the group
    would fight the separate ones). `vpc_id` and `cluster_security_group_id` are placeholders."""
    group = Desired(
        SECURITY_GROUP_TYPE,
        f"{name}-sg",
        (NODE_SECURITY_GROUP,),
        {
            "vpcId": vpc_id,
            "description": "HyperPod nodes: EFA (all traffic within the group) and EKS",
            # Rules are the separate resources below; the default allow-all egress is revoked.
            "tags": {**tags, "Name": f"{name}-sg"},
        },
    )
    own = ref(group.name, "id")
    peers = {
        "efa-ingress-self": (SG_INGRESS_TYPE, {"referencedSecurityGroupId": own}),
        "efa-egress-self": (SG_EGRESS_TYPE, {"referencedSecurityGroupId": own}),
        # kubelet, webhooks and pod traffic from the control plane.
        "eks-ingress": (SG_INGRESS_TYPE, {"referencedSecurityGroupId": cluster_security_group_id}),
        "eks-egress": (SG_EGRESS_TYPE, {"referencedSecurityGroupId": cluster_security_group_id}),
        # Nodes pull images, reach S3 (gateway endpoint), STS and the Hub through the NAT.
        "egress-internet": (SG_EGRESS_TYPE, {"cidrIpv4": "0.0.0.0/0"}),
        # Pods on other nodes (system group, router) in the VPC.
        "vpc-ingress": (SG_INGRESS_TYPE, {"cidrIpv4": vpc_cidr}),
    }
    rules = [
        Desired(
            type_,
            f"{name}-{key}",
            (NODE_SECURITY_GROUP,),
            {
                "securityGroupId": own,
                "ipProtocol": "-1",  # all protocols: EFA's SRD is not TCP or UDP
                "description": key,
                **peer,
            },
        )
        for key, (type_, peer) in peers.items()
    ]
    # And the way back: the EKS-managed cluster security group admits only itself, so the
    # nodes' kubelets could not reach the API server (443) on the control-plane ENIs.
    rules.append(
        Desired(
            SG_INGRESS_TYPE,
            f"{name}-cluster-ingress-from-nodes",
            (NODE_SECURITY_GROUP,),
            {
                "securityGroupId": cluster_security_group_id,
                "referencedSecurityGroupId": own,
                "ipProtocol": "tcp",
                "fromPort": 443,
                "toPort": 443,
                "description": "HyperPod nodes to the EKS API",
            },
        )
    )
    return NodeSecurityGroupSpec(name, group, tuple(rules))
