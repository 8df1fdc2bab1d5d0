"""Where GPU capacity lives: one AZ, resolved from its ID, and an optional placement group.

Everything that places GPU work (the GPU subnet, the HyperPod groups, the endpoint's
`pdSpec.topologySpec`) derives from the one `availabilityZoneId`, so placement cannot drift
across AZs: p5 capacity is per AZ (awslabs/awsome-distributed-ai #186, #189, #204), and a
placement group with multi-AZ subnets breaks later updates (terraform-aws-modules/terraform-aws-eks
#3044).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from core.vocabulary import PLACEMENT
from program.outputs import Outputs


@dataclass(frozen=True)
class PlacementArgs:
    az_id: str
    outputs: Outputs  # publishes `{name}.azName` and the placement group's name
    placement_group: bool = False
    tags: dict[str, str] = field(default_factory=dict)


class Placement(pulumi.ComponentResource):
    az_id: str
    az_name: pulumi.Output[str]
    placement_group_name: pulumi.Output[str] | None

    def __init__(self, name: str, args: PlacementArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(PLACEMENT, name, None, opts)
        self.az_id = args.az_id
        # AZ names differ per account (use2-az2 may be us-east-2b here, us-east-2c elsewhere):
        # ask EC2, never guess.
        zones = aws.get_availability_zones_output(
            filters=[{"name": "zone-id", "values": [args.az_id]}],
            opts=pulumi.InvokeOutputOptions(parent=self),
        )
        self.az_name = zones.names.apply(lambda names: _single(names, args.az_id))
        args.outputs.publish(name, azName=self.az_name)
        self.placement_group_name = None
        if args.placement_group:
            group = aws.ec2.PlacementGroup(
                f"{name}-cluster-pg",
                strategy="cluster",
                tags=args.tags,
                opts=pulumi.ResourceOptions(parent=self),
            )
            self.placement_group_name = group.name
            args.outputs.publish(f"{name}-cluster-pg", name=group.name)
        self.register_outputs(
            {
                "azId": args.az_id,
                "azName": self.az_name,
                "placementGroup": self.placement_group_name,
            }
        )


def _single(names: list[str], az_id: str) -> str:
    if len(names) != 1:
        raise pulumi.RunError(
            f"hyperpod-dpd:availabilityZoneId: EC2 reports {len(names)} zones for AZ ID "
            f"'{az_id}' in this Region; use an AZ ID listed by "
            "`aws ec2 describe-availability-zones --query 'AvailabilityZones[].ZoneId'`"
        )
    return names[0]
