"""GPU memory of one worker: the utilizations offered are ones the rules accept (hypothesis)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.catalog import GIB, INSTANCES, MODELS, load_model
from core.gpu_memory import worker_fit


@given(
    model=st.sampled_from(sorted(MODELS)),
    instance=st.sampled_from(sorted(INSTANCES)),
    tp=st.sampled_from([1, 2, 4, 8]),
    max_len=st.integers(256, 131_072),
    buffer_gib=st.integers(0, 32),
    role=st.sampled_from(["prefill", "decode"]),
)
def test_the_utilizations_offered_are_ones_the_rules_accept(
    model, instance, tp, max_len, buffer_gib, role
):
    """The gpu-memory and pd-buffer-fits rules advise "a utilization between lowest and highest":
    both ends must pass both rules' own checks (vLLM's rounding of the share included)."""
    spec, inst = load_model(model), INSTANCES[instance]
    if tp > inst.gpu_count:
        return
    fit = worker_fit(role, spec, inst, tp, max_len, buffer_gib * GIB)
    if not fit.possible:
        return
    for utilization in (fit.lowest, fit.highest):
        assert fit.holds(utilization) and fit.leaves_room(utilization), utilization
