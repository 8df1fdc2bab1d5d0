"""hyperpod-dpd-efa (policies/rules/cluster/efa.py): a GPU group without an EFA interface, and GPU
security groups without the self-referencing egress rule EFA needs."""

from __future__ import annotations

from tests.policies.conftest import gpu_group, named
from tests.policies.rules.helpers import CLUSTER_URN, findings


def test_missing_efa_interface(dev):
    del gpu_group(dev, "decode")["networkInterface"]
    assert findings("hyperpod-dpd-efa", dev) == [
        (
            CLUSTER_URN,
            "GPU instance group decode has no EFA network interface (got None); KV transfers "
            "would fall back to TCP (< 1 GB/s): set interfaceType efa",
        )
    ]


def test_missing_self_referencing_egress(dev):
    egress = named(dev, "nodes-efa-egress-self")
    dev.remove(egress)
    sg = gpu_group(dev)["overrideVpcConfig"]["securityGroupIds"][0]
    message = (
        f"security group {sg} of GPU instance group {{}} lacks a self-referencing all-traffic "
        "egress rule; EFA needs both"
    )
    assert findings("hyperpod-dpd-efa", dev) == [
        (CLUSTER_URN, message.format("decode")),
        (CLUSTER_URN, message.format("prefill")),
    ]
