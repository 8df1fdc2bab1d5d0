"""A security group's rules, each its own resource, registered from their desired specs: the
nodes' group (infra/efa.py) and the traffic split's (workloads/traffic.py) alike."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from core.vocabulary import SG_INGRESS_TYPE
from program.outputs import Outputs
from specs.base import Desired


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
