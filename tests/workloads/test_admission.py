"""The admission policies are in force before any endpoint starts a pod: the IEC waits for them
(and for its namespace's metadata egress policy), and each binding for the policy it names."""

from __future__ import annotations

from tests.conftest import canary_raw, run_stack, stack_raw

ADMISSION = [f"endpoint-admission-{p}{b}" for p in ("pods", "workloads") for b in ("", "-binding")]


def _depends(run, name):
    return run.named(name).depends_on


def _after_admission(needs):
    """Every policy and binding is among `needs` (a component dependency is its children's)."""
    return all(any(d.endswith(f"::{a}") for d in needs) for a in ADMISSION)


def test_every_endpoint_starts_after_the_admission_policies_and_its_egress_policy():
    dev = run_stack(stack_raw("dev"))
    assert _after_admission(_depends(dev, "endpoint-iec"))
    assert any(d.endswith("::endpoint-metadata-egress") for d in _depends(dev, "endpoint-iec"))
    canary = run_stack(canary_raw(), stack="canary")
    for key in ("baseline", "candidate"):
        needs = _depends(canary, f"endpoint-{key}-iec")
        assert _after_admission(needs), key
        assert any(d.endswith("::endpoint-namespaces-inference-metadata-egress") for d in needs)


def test_each_binding_comes_after_its_policy():
    dev = run_stack(stack_raw("dev"))
    for part in ("pods", "workloads"):
        needs = _depends(dev, f"endpoint-admission-{part}-binding")
        assert any(d.endswith(f"::endpoint-admission-{part}") for d in needs), part
