"""hyperpod-dpd-tensor-parallel (policies/rules/endpoint/tensor_parallel.py): decode TP below prefill
TP, pods requesting fewer GPUs than the node has, and TP above the GPUs of one node."""

from __future__ import annotations

from tests.policies.conftest import iec_spec
from tests.policies.rules.helpers import IEC_URN, findings


def test_decode_tp_below_prefill_tp(dev):
    iec_spec(dev)["pdSpec"]["decodingSpec"]["args"] += ["--tensor-parallel-size", "4"]
    assert (
        IEC_URN,
        "decode TP 4 < prefill TP 8: unsupported, the decoder crashes; set "
        "hyperpod-dpd:endpoint.prefill.tensorParallelSize to 4, or raise it on decode",
    ) in findings("hyperpod-dpd-tensor-parallel", dev)


def test_gpu_request_below_the_node(dev):
    role = iec_spec(dev)["pdSpec"]["prefillSpec"]
    role["resources"]["requests"]["nvidia.com/gpu"] = "4"
    assert findings("hyperpod-dpd-tensor-parallel", dev) == [
        (
            IEC_URN,
            "prefill pods request 4 GPUs but ml.p5.48xlarge has 8: one DPD worker owns a node; "
            "request all of them",
        )
    ]


def test_tp_above_gpus_per_node(dev):
    iec_spec(dev)["pdSpec"]["prefillSpec"]["args"] += ["--tensor-parallel-size", "16"]
    assert (
        IEC_URN,
        "prefill --tensor-parallel-size 16 exceeds the 8 GPUs of one ml.p5.48xlarge; set "
        "hyperpod-dpd:endpoint.prefill.tensorParallelSize to 8 or less",
    ) in findings("hyperpod-dpd-tensor-parallel", dev)
