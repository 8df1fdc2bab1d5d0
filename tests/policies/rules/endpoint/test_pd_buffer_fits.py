"""hyperpod-dpd-pd-buffer-fits (policies/rules/endpoint/pd_buffer_fits.py): a PD buffer that does not
fit the GPU memory vLLM leaves, following its fix gives a decoder that boots (the
gpu-memory rule agrees), and the overhead limit is tunable."""

from __future__ import annotations

from policies.rules import Limits
from tests.policies.conftest import set_env
from tests.policies.rules.helpers import IEC_URN, _set_arg, findings


def test_32_gib_buffer_at_075_on_h100_does_not_fit(dev):
    set_env(dev, "PD_BUFFER_SIZE", str(32 * 2**30))
    assert findings("hyperpod-dpd-pd-buffer-fits", dev) == [
        (
            IEC_URN,
            "PD_BUFFER_SIZE 32 GiB + 2 GiB overhead does not fit the 20.0 GiB each H100 leaves at "
            "--gpu-memory-utilization 0.75 on the decoder; set "
            # 0.27, not the decoder's own 0.24: the prefiller reads the same key and needs 0.27.
            "hyperpod-dpd:endpoint.gpuMemoryUtilization between 0.27 and 0.57, or lower "
            "hyperpod-dpd:endpoint.pdBufferSize",
        )
    ]


def test_following_the_buffer_fix_gives_a_bootable_decoder(dev):
    # The old advice (0.57 - the buffer only) ignored the weights: a 60 GiB buffer left no
    # utilization that holds both; now the fix says so and names what else to change.
    set_env(dev, "PD_BUFFER_SIZE", str(60 * 2**30))
    ((_, message),) = findings("hyperpod-dpd-pd-buffer-fits", dev)
    assert "no --gpu-memory-utilization works" in message
    assert "shrink hyperpod-dpd:endpoint.pdBufferSize to 58GiB" in message
    set_env(dev, "PD_BUFFER_SIZE", str(32 * 2**30))
    _set_arg(dev, "--gpu-memory-utilization", "0.57")  # what the fix above says
    assert findings("hyperpod-dpd-pd-buffer-fits", dev) == []
    assert findings("hyperpod-dpd-gpu-memory", dev) == []


def test_overhead_limit_is_tunable(dev):
    set_env(dev, "PD_BUFFER_SIZE", str(17 * 2**30))
    assert findings("hyperpod-dpd-pd-buffer-fits", dev) == []  # 17 + 2 <= 20
    assert len(findings("hyperpod-dpd-pd-buffer-fits", dev, Limits(overhead_gib=4))) == 1
