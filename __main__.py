"""hyperpod-dpd: the Pulumi program. Loads the stack config once, then wires the components.

Config errors stop the program before any resource is registered, so a bad stack file never
leaves a half-created stack.
"""

import pulumi

from infra.config import load_stack_config
from infra.network import Network, NetworkArgs
from infra.tags import base_tags

config = load_stack_config()
settings = config.settings
tags = base_tags(config.project, config.stack)

network = Network(
    "network",
    NetworkArgs(
        vpc_cidr=settings.network.vpc_cidr,
        gpu_az_id=settings.availability_zone_id,
        control_plane_az_ids=list(settings.network.control_plane_az_ids),
        nat_gateways=settings.network.nat_gateways,
        region=settings.region,
        tags=tags,
    ),
)

pulumi.export("region", settings.region)
pulumi.export("gpuAvailabilityZoneId", settings.availability_zone_id)
pulumi.export("vpcId", network.vpc_id)
pulumi.export("gpuSubnetId", network.gpu_subnet_id)
pulumi.export("privateSubnetIds", network.private_subnet_ids)
