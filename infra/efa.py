"""The security group of the GPU nodes: EFA needs all traffic to and from the group itself.

The EFA health check fails with "Unresponsive receiver" when the self-referencing *egress* rule
is missing, even with an allow-all egress rule (field-problems.md row 2). Nothing else is let
in: no ingress from anywhere but the group itself and the EKS cluster security group.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws


@dataclass(frozen=True)
class EfaSecurityGroupArgs:
    vpc_id: pulumi.Input[str]
    vpc_cidr: str
    cluster_security_group_id: pulumi.Input[str]
    tags: dict[str, str] = field(default_factory=dict)


class EfaSecurityGroup(pulumi.ComponentResource):
    group: aws.ec2.SecurityGroup
    id: pulumi.Output[str]

    def __init__(
        self, name: str, args: EfaSecurityGroupArgs, opts: pulumi.ResourceOptions | None = None
    ):
        super().__init__("hyperpod-dpd:infra:EfaSecurityGroup", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.group = aws.ec2.SecurityGroup(
            f"{name}-sg",
            vpc_id=args.vpc_id,
            description="HyperPod nodes: EFA (all traffic within the group) and EKS",
            # Rules are separate resources below; revoking the default allow-all egress.
            tags={**args.tags, "Name": f"{name}-sg"},
            opts=child,
        )
        self.id = self.group.id
        rules = {
            "efa-ingress-self": ("ingress", {"referenced_security_group_id": self.group.id}),
            "efa-egress-self": ("egress", {"referenced_security_group_id": self.group.id}),
            # kubelet, webhooks and pod traffic from the control plane.
            "eks-ingress": (
                "ingress",
                {"referenced_security_group_id": args.cluster_security_group_id},
            ),
            "eks-egress": (
                "egress",
                {"referenced_security_group_id": args.cluster_security_group_id},
            ),
            # Nodes pull images, reach S3 (gateway endpoint), STS and the Hub through the NAT.
            "egress-internet": ("egress", {"cidr_ipv4": "0.0.0.0/0"}),
            # Pods on other nodes (system group, router) in the VPC.
            "vpc-ingress": ("ingress", {"cidr_ipv4": args.vpc_cidr}),
        }
        for key, (direction, peer) in rules.items():
            rule_type = (
                aws.vpc.SecurityGroupIngressRule
                if direction == "ingress"
                else aws.vpc.SecurityGroupEgressRule
            )
            rule_type(
                f"{name}-{key}",
                security_group_id=self.group.id,
                ip_protocol="-1",  # all protocols: EFA's SRD is not TCP or UDP
                description=key,
                **peer,
                opts=child,
            )
        # And the way back: the EKS-managed cluster security group admits only itself, so the
        # nodes' kubelets could not reach the API server (443) on the control-plane ENIs.
        aws.vpc.SecurityGroupIngressRule(
            f"{name}-cluster-ingress-from-nodes",
            security_group_id=args.cluster_security_group_id,
            referenced_security_group_id=self.group.id,
            ip_protocol="tcp",
            from_port=443,
            to_port=443,
            description="HyperPod nodes to the EKS API",
            opts=child,
        )
        self.register_outputs({"id": self.id})
