"""hyperpod-dpd-role-capacity (policies/rules/endpoint/role_capacity.py): more decode replicas than
decode nodes, and colocated replicas against all the GPU nodes."""

from __future__ import annotations

from tests.policies.conftest import iec_spec
from tests.policies.rules.helpers import IEC_URN, findings


def test_more_decode_replicas_than_decode_nodes(dev):
    iec_spec(dev)["pdSpec"]["decodingSpec"]["replicas"] = 2
    assert findings("hyperpod-dpd-role-capacity", dev) == [
        (
            IEC_URN,
            "2 decode replicas need 2 nodes but the decode instance groups have 1: lower "
            "hyperpod-dpd:endpoint.decode.replicas to 1, or raise "
            "hyperpod-dpd:instanceGroups.decode.instanceCount to 2",
        )
    ]


def test_colocated_replicas_against_all_gpu_nodes(dev):
    spec = iec_spec(dev)
    del spec["pdSpec"]
    spec["replicas"] = 3
    ((_, message),) = findings("hyperpod-dpd-role-capacity", dev)
    assert message.startswith(
        "3 prefill or decode replicas need 3 nodes but the prefill or decode instance groups have 2"
    )
