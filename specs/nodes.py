"""The HyperPod nodes' security group: what the cluster needs, each rule with the AWS page that
says so, and nothing from the rest of the VPC.

- Node to node, all traffic, in and out (efa-ingress-self, efa-egress-self): EFA requires a
  security group that allows all inbound and outbound traffic to and from itself ("Get started
  with EFA", step "Prepare an EFA-enabled security group",
  https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa-start.html#efa-start-security). The
  EFA health check fails with "Unresponsive receiver" when the self-referencing *egress* rule is
  missing, even with an allow-all egress rule (awslabs/awsome-distributed-ai PR #259,
  gardener/gardener-extension-provider-aws #1832). Every HyperPod node (system and GPU groups)
  is in this group, so these rules are also how pods on different nodes reach each other
  (router -> workers, prefill <-> decode NIXL/NCCL over TCP, CoreDNS, metrics scrapes); the
  NetworkPolicies (specs/isolation/network_policies.py) narrow that pod traffic. EFA's SRD traffic bypasses
  the kernel: neither conntrack nor a NetworkPolicy sees it; this group is its only guard.
- The EKS control plane, both ways (eks-ingress, eks-egress, cluster-ingress-from-nodes): the
  kubelet API and webhooks from the control plane, the API server from the nodes ("Amazon EKS
  security group requirements and considerations",
  https://docs.aws.amazon.com/eks/latest/userguide/sec-group-reqs.html: the cluster security
  group lets all traffic between the control plane and the nodes; its minimum is 443, 10250 and
  53, but webhooks of add-ons listen on ports of their own, so the control plane keeps all).
- Out to the internet on TCP 443 only (egress-internet): images (ECR, public registries), S3
  through the gateway endpoint, STS, the EKS and SageMaker APIs and the Hugging Face Hub, all
  HTTPS ("Amazon EKS security group requirements", outbound to the internet or VPC endpoints).
- DNS to the VPC (egress-dns-udp, egress-dns-tcp): the Route 53 Resolver at the VPC's base + 2
  is not filtered by security groups
  (https://docs.aws.amazon.com/vpc/latest/userguide/security-group-rules.html), a DNS server of
  your own in the VPC is.
- The traffic split's load balancer, when there is one (specs/traffic/__init__.py adds traffic-to-routers).

Nothing else: the old all-traffic ingress from the whole VPC CIDR (vpc-ingress) is gone.
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
    every = {"ipProtocol": "-1"}  # all protocols: EFA's SRD is not TCP or UDP
    peers = {
        "efa-ingress-self": (SG_INGRESS_TYPE, {**every, "referencedSecurityGroupId": own}),
        "efa-egress-self": (SG_EGRESS_TYPE, {**every, "referencedSecurityGroupId": own}),
        # kubelet, webhooks and pod traffic from the control plane, and back.
        "eks-ingress": (
            SG_INGRESS_TYPE, {**every, "referencedSecurityGroupId": cluster_security_group_id}
        ),
        "eks-egress": (
            SG_EGRESS_TYPE, {**every, "referencedSecurityGroupId": cluster_security_group_id}
        ),
        # Nodes pull images, reach S3 (gateway endpoint), STS and the Hub: HTTPS through the NAT.
        "egress-internet": (
            SG_EGRESS_TYPE,
            {"ipProtocol": "tcp", "fromPort": 443, "toPort": 443, "cidrIpv4": "0.0.0.0/0"},
        ),
        "egress-dns-udp": (
            SG_EGRESS_TYPE,
            {"ipProtocol": "udp", "fromPort": 53, "toPort": 53, "cidrIpv4": vpc_cidr},
        ),
        "egress-dns-tcp": (
            SG_EGRESS_TYPE,
            {"ipProtocol": "tcp", "fromPort": 53, "toPort": 53, "cidrIpv4": vpc_cidr},
        ),
    }  # fmt: skip
    rules = [
        Desired(
            type_,
            f"{name}-{key}",
            (NODE_SECURITY_GROUP,),
            {"securityGroupId": own, "description": key, **peer},
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
