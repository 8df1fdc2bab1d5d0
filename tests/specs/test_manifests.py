"""Rendered InferenceEndpointConfigs: valid for the operator's CRDs (v3.3 and v3.2) and equal
to the committed golden files. After an intended change: UPDATE_GOLDEN=1 pytest tests/specs.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from core.sizing.catalog import DPD_INSTANCE_TYPES
from core.units import INT32_MAX
from core.versions import OPERATOR_ADDON_VERSIONS
from hyperpod_dpd.plan.planner import kubernetes_manifests, render_manifest
from specs.schema import validate_manifest
from tests.conftest import edit, run_stack, stack_raw
from tests.settings.problems import only_problem

GOLDEN = Path(__file__).parent / "golden"
NS = "hyperpod-dpd"


def _dev(*edits):
    raw = stack_raw("dev")
    for path, value in edits:
        edit(raw, f"{NS}:{path}", value)
    return raw, "dev"


def _types(instance_type):
    return _dev(
        ("instanceGroups.prefill.instanceType", instance_type),
        ("instanceGroups.decode.instanceType", instance_type),
    )


VARIANTS = {
    "dev": lambda: (stack_raw("dev"), "dev"),
    "prod": lambda: (stack_raw("prod"), "prod"),
    "colocated": lambda: _dev(("endpoint.mode", "colocated")),
    "multi-replica": lambda: _dev(
        ("instanceGroups.prefill.instanceCount", 3),
        ("instanceGroups.decode.instanceCount", 2),
        ("endpoint.prefill.replicas", 3),
        ("endpoint.decode.replicas", 2),
        ("endpoint.routingStrategy", "roundrobin"),
    ),
    **{
        t.removeprefix("ml.").replace(".", "-"): (lambda t=t: _types(t)) for t in DPD_INSTANCE_TYPES
    },
    # Several endpoints (Pulumi.canary.yaml): each IEC on its own, by endpoint key.
    "canary-baseline": lambda: _canary("baseline"),
    "canary-candidate": lambda: _canary("candidate"),
    "canary-candidate-autoscaled": lambda: _canary(
        "candidate",
        ("instanceGroups.prefill.instanceCount", 2),
        ("instanceGroups.decode.instanceCount", 3),
        ("endpoints.candidate.prefill.tensorParallelSize", 4),
        (
            "endpoints.candidate.autoscaling",
            {
                "prefill": {
                    "minReplicas": 1,
                    "maxReplicas": 2,
                    "metric": "waiting-requests",
                    "target": 4,
                },
                "decode": {
                    "minReplicas": 1,
                    "maxReplicas": 3,
                    "metric": "kv-cache-usage",
                    "target": 0.8,
                },
            },
        ),
    ),
    # The pools scaled as a pair (autoscaling.ratio), with what advise recorded: the decode pool
    # follows prefill at 2 per 1 through a second trigger (prometheusTriggerList).
    "canary-candidate-paired": lambda: _canary(
        "candidate",
        ("instanceGroups.prefill.instanceCount", 2),
        ("instanceGroups.decode.instanceCount", 4),
        (
            "endpoints.candidate.autoscaling",
            {
                "prefill": {
                    "minReplicas": 1,
                    "maxReplicas": 2,
                    "metric": "prompt-tokens-per-second",
                    "target": 18000,
                    "capacity": {
                        "metric": "prompt-tokens-per-second",
                        "perReplica": 18400,
                        "within": "TTFT p50 <= 500 ms at ISL 4096 / OSL 256",
                    },
                },
                "decode": {
                    "minReplicas": 2,
                    "maxReplicas": 4,
                    "metric": "running-requests",
                    "target": 24,
                },
                "ratio": {"prefill": 1, "decode": 2},
            },
        ),
    ),
    "canary-baseline-autoscaled": lambda: _canary(
        "baseline",
        ("instanceGroups.colocated.instanceCount", 3),
        ("endpoints.baseline.groups", ["colocated"]),
        (
            "endpoints.baseline.autoscaling",
            {
                "minReplicas": 2,
                "maxReplicas": 3,
                "query": "sum(rate(vllm:request_success_total[1m]))",
                "target": 2,
            },
        ),
    ),
}


def _canary(key, *edits):
    raw = stack_raw("canary")
    for path, value in edits:
        edit(raw, f"{NS}:{path}", value)
    return raw, "canary", key


def rendered(variant: str, operator: str | None = None) -> str:
    """The variant's IEC as the plan renders it (for `operator`, the stack's
    inferenceOperator.version, when given)."""
    raw, stack, *key = VARIANTS[variant]()
    if operator is not None:
        edit(raw, f"{NS}:inferenceOperator", {**raw.get(f"{NS}:inferenceOperator", {})})
        edit(raw, f"{NS}:inferenceOperator.version", operator)
        edit(raw, f"{NS}:inferenceOperator.addonVersion", OPERATOR_ADDON_VERSIONS[operator])
    manifests = kubernetes_manifests(run_stack(raw, stack=stack))
    prefix = "inferenceendpointconfig." + (f"inference.{key[0]}." if key else "")
    (iec,) = [m for name, m in manifests.items() if name.startswith(prefix)]
    return render_manifest(iec)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("operator", ["3.3", "3.2"])
def test_manifest_is_valid_for_the_crd(variant, operator):
    """Rendered for that operator: 3.3's CRD has loadBalancer.idleTimeoutSeconds, 3.2's not."""
    manifest = yaml.safe_load(rendered(variant, operator))
    assert validate_manifest(manifest, operator) == []
    has_timeout = "idleTimeoutSeconds" in manifest["spec"]["loadBalancer"]
    assert has_timeout == (operator != "3.2")


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_manifest_equals_golden(variant):
    text = rendered(variant)
    golden = GOLDEN / f"{variant}.yaml"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(text)
    assert golden.exists(), f"no golden file {golden.name}: run UPDATE_GOLDEN=1 pytest {__file__}"
    assert text == golden.read_text()


def test_dpd_and_colocated_differ_only_where_they_should():
    dpd = yaml.safe_load(rendered("dev"))["spec"]
    colocated = yaml.safe_load(rendered("colocated"))["spec"]
    assert "pdSpec" in dpd and "pdSpec" not in colocated
    changed = {k for k in dpd.keys() | colocated.keys() if dpd.get(k) != colocated.get(k)}
    assert changed == {"pdSpec", "replicas", "worker"}


def test_autoscaling_at_the_largest_values_the_settings_take_is_valid_for_the_crd():
    """The settings' bounds are the CRD's: at INT32_MAX the manifest is valid; one more is
    refused by the settings, naming the key, before anything is rendered."""
    scaling = {"minReplicas": 1, "maxReplicas": 1, "metric": "waiting-requests", "target": 4,
               "cooldownSeconds": INT32_MAX, "scaleDownStabilizationSeconds": INT32_MAX}  # fmt: skip
    raw, stack = _dev(("endpoint.autoscaling", {"prefill": scaling, "decode": dict(scaling)}))
    manifests = kubernetes_manifests(run_stack(raw, stack=stack))
    (iec,) = [m for name, m in manifests.items() if name.startswith("inferenceendpointconfig.")]
    assert validate_manifest(yaml.safe_load(render_manifest(iec)), "3.3") == []
    key = f"{NS}:endpoint.autoscaling.decode.cooldownSeconds"
    edit(raw, key, INT32_MAX + 1)
    message = only_problem(raw)
    assert message.startswith(f"{key}: got {INT32_MAX + 1}; allowed: <= {INT32_MAX}")
