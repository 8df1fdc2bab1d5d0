"""The cluster's settings: instance groups, the network, room on the system nodes, and what AWS refuses at `pulumi up`."""
