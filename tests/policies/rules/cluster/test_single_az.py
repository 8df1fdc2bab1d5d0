"""hyperpod-dpd-single-az (policies/rules/cluster/single_az.py): GPU groups in two subnets, a GPU
group inheriting the cluster's multi-AZ subnets, and `sameAZ: false` on the endpoint."""

from __future__ import annotations

from tests.policies.conftest import gpu_group, iec_spec
from tests.policies.rules.helpers import CLUSTER_URN, IEC_URN, findings


def test_gpu_groups_in_two_subnets(dev):
    gpu_group(dev, "decode")["overrideVpcConfig"]["subnets"] = ["subnet-0other"]
    ((urn, message),) = findings("hyperpod-dpd-single-az", dev)
    assert urn == CLUSTER_URN
    assert message.startswith("GPU instance groups use 2 different subnets (")
    assert message.endswith("all must share the one GPU subnet of hyperpod-dpd:availabilityZoneId")


def test_gpu_group_without_override_inherits_multi_az(dev):
    del gpu_group(dev, "decode")["overrideVpcConfig"]
    assert findings("hyperpod-dpd-single-az", dev) == [
        (
            CLUSTER_URN,
            "GPU instance group decode has no overrideVpcConfig: it would inherit the cluster's "
            "multi-AZ subnets; pin it to the GPU subnet of hyperpod-dpd:availabilityZoneId",
        )
    ]


def test_same_az_false(dev):
    iec_spec(dev)["pdSpec"]["topologySpec"]["sameAZ"] = False
    assert findings("hyperpod-dpd-single-az", dev) == [
        (
            IEC_URN,
            "pdSpec.topologySpec.sameAZ is false: prefill and decode pods may land in different "
            "AZs and KV transfers leave EFA; remove the override",
        )
    ]
