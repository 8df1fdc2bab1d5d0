"""hyperpod-dpd-shm-volume (policies/rules/endpoint/shm_volume.py), an advisory: tensor parallelism
without a memory-backed /dev/shm volume."""

from __future__ import annotations

from tests.policies.conftest import iec_spec
from tests.policies.rules.helpers import IEC_URN, findings


def test_no_shm_volume_with_tp(dev):
    del iec_spec(dev)["kubernetes"]
    assert findings("hyperpod-dpd-shm-volume", dev) == [
        (
            IEC_URN,
            "tensor parallelism 8 without a memory-backed volume for /dev/shm; NCCL may fail to "
            "create shared memory segments",
        )
    ]
