"""The security group of the HyperPod nodes and its rules, registered from their spec
(specs/nodes.py says why each rule exists: EFA needs all traffic to and from the group).
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from core.vocabulary import NODE_SECURITY_GROUP
from program.outputs import Outputs
from program.security_group_rules import create_rules
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
