"""The security group of the HyperPod nodes and its rules, registered from their spec
(specs/nodes.py says why each rule exists: EFA needs all traffic to and from the group).
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from core.vocabulary import NODE_SECURITY_GROUP, SG_INGRESS_TYPE
from program.outputs import Outputs
from specs.base import Desired
from specs.nodes import NodeSecurityGroupSpec


@dataclass(frozen=True)
class EfaSecurityGroupArgs:
    spec: NodeSecurityGroupSpec
    outputs: Outputs  # resolves the VPC and cluster security group; publishes `{name}-sg.id`


class EfaSecurityGroup(pulumi.ComponentResource):
    group: aws.ec2.SecurityGroup
    id: pulumi.Output[str]

    def __init__(
        self, name: str, args: EfaSecurityGroupArgs, opts: pulumi.ResourceOptions | None = None
    ):
        super().__init__(NODE_SECURITY_GROUP, name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        out, spec = args.outputs, args.spec
        self.group = aws.ec2.SecurityGroup(
            spec.group.name, **out.resolve(spec.group.kwargs()), opts=child
        )
        self.id = self.group.id
        out.publish(spec.group.name, id=self.id)
        create_rules(spec.rules, out, child)
        self.register_outputs({"id": self.id})


def create_rules(
    rules: tuple[Desired, ...], outputs: Outputs, opts: pulumi.ResourceOptions
) -> list[pulumi.CustomResource]:
    """A security group's rules, each its own resource (rules inline in the group would fight
    separate ones), from their desired specs."""
    created = []
    for rule in rules:
        kind = (
            aws.vpc.SecurityGroupIngressRule
            if rule.type == SG_INGRESS_TYPE
            else aws.vpc.SecurityGroupEgressRule
        )
        created.append(kind(rule.name, **outputs.resolve(rule.kwargs()), opts=opts))
    return created
