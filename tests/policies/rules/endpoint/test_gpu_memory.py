"""hyperpod-dpd-gpu-memory (policies/rules/endpoint/gpu_memory.py): a utilization too low for the
weights, a model whose weights fit no utilization (405B on H100) and the advice for it,
and each instance type that advice names making the workers fit."""

from __future__ import annotations

import pytest

from policies.gate import judge
from settings import parse_settings
from specs.desired import desired_state
from tests.conftest import canary_raw, edit
from tests.policies.conftest import gpu_group, iec_spec, named
from tests.policies.rules.helpers import _set_arg, findings

NS = "hyperpod-dpd"


def test_a_very_low_utilization_cannot_hold_the_weights(dev):
    _set_arg(dev, "--gpu-memory-utilization", "0.1")
    found = findings("hyperpod-dpd-gpu-memory", dev)
    assert [m.split(":")[0] for _, m in found] == [
        "prefill workers cannot start",
        "decode workers cannot start",
    ]
    assert found[1][1] == (
        "decode workers cannot start: llama-3.3-70b at TP 8 needs 19.1 GiB per GPU for weights, "
        "activations and the KV cache of one 16384-token sequence, but --gpu-memory-utilization "
        "0.1 gives vLLM 8.0 GiB of each H100's 80.0 GiB; set "
        # Both roles read the key: a value in range for the decoder and the prefiller alike.
        "hyperpod-dpd:endpoint.gpuMemoryUtilization between 0.27 and 0.87"
    )


def test_405b_on_h100_fits_no_utilization_and_says_what_else(dev):
    for name in ("sizing-model",):
        named(dev, "endpoint-iec").props["metadata"]["annotations"][f"hyperpod-dpd/{name}"] = (
            "llama-3.1-405b"
        )
    ((_, _prefill), (_, decode)) = findings("hyperpod-dpd-gpu-memory", dev)
    # The weights alone (94.5 GiB per GPU at TP 8) exceed an H100: no context length can fit,
    # so the advice says so and names only what would work ("advice must help").
    assert "the weights alone do not fit: llama-3.1-405b at TP 8 is 94.5 GiB per GPU" in decode
    assert "maxModelLen" not in decode and "tensorParallelSize" not in decode
    assert decode.endswith(
        "more memory per GPU: ml.p5e.48xlarge (H200, 141 GiB), ml.p5en.48xlarge (H200, 141 GiB), "
        "ml.p6-b200.48xlarge (B200, 179 GiB), ml.p6-b300.48xlarge (B300, 269 GiB), or stage an "
        "FP8 checkpoint of llama-3.1-405b (half the weights) at TP 8"
    )


@pytest.mark.parametrize(
    "instance_type", ["ml.p5e.48xlarge", "ml.p5en.48xlarge", "ml.p6-b200.48xlarge"]
)
def test_following_the_405b_advice_makes_the_workers_fit(dev, instance_type):
    """Each instance type the advice names, applied to the stack it was shown for, removes the
    problem (the hint is checked with the same sizing before it is offered)."""
    named(dev, "endpoint-iec").props["metadata"]["annotations"]["hyperpod-dpd/sizing-model"] = (
        "llama-3.1-405b"
    )
    assert findings("hyperpod-dpd-gpu-memory", dev)
    for name in ("prefill", "decode"):
        gpu_group(dev, name)["instanceType"] = instance_type
    iec_spec(dev)["instanceType"] = instance_type
    _set_arg(dev, "--gpu-memory-utilization", "0.85")
    assert findings("hyperpod-dpd-gpu-memory", dev) == []


def test_a_colocated_worker_on_a_type_outside_the_catalog_is_judged_too():
    """The canary's baseline on ml.g6e.12xlarge at TP 4: its 4 L40S can hold llama-3.3-70b, not
    at utilization 0.75. The rule sizes it with EC2's numbers (core/sizing/gpu_types.py); it used to
    skip every type outside the five DPD types, and the plan passed a worker that cannot start."""
    raw = edit(canary_raw(), f"{NS}:instanceGroups.colocated.instanceType", "ml.g6e.12xlarge")
    edit(raw, f"{NS}:endpoints.baseline.tensorParallelSize", 4)
    [found] = [
        v.message
        for v in judge(desired_state(parse_settings(raw), NS, "canary"))
        if v.policy == "hyperpod-dpd-gpu-memory"
    ]
    assert found.startswith("workers cannot start: llama-3.3-70b at TP 4 needs 36.1 GiB per GPU")
    assert "of each L40S's 44.7 GiB" in found
    assert found.endswith(f"set {NS}:endpoints.baseline.gpuMemoryUtilization between 0.81 and 0.95")
