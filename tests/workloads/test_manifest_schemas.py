"""Every Kubernetes object the program or a benchmark run creates is valid for the API server of
the stack's Kubernetes version: the built-in kinds against Kubernetes' own OpenAPI schemas
(kubernetes-validate, strict: an unknown or misspelt field is an error, as `kubectl apply
--validate=strict` makes it). The endpoint's IEC is checked against the operator's CRD
elsewhere (tests/specs/test_manifests.py)."""

from __future__ import annotations

import kubernetes_validate
import pytest

from core.vocabulary import IEC_KIND
from hyperpod_dpd.benchmark import job as benchmark_job
from hyperpod_dpd.plan.planner import kubernetes_manifests
from settings import parse_settings
from tests.conftest import run_stack, stack_raw


def _validate(manifest: dict, version: str) -> None:
    kubernetes_validate.validate(manifest, f"{version}.0", strict=True)


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_programs_kubernetes_objects_are_valid_at_the_stacks_version(stack):
    raw = stack_raw(stack)
    version = parse_settings(raw).eks.kubernetes_version
    manifests = kubernetes_manifests(run_stack(raw, stack=stack))
    kinds = set()
    for manifest in manifests.values():
        if manifest["kind"] == IEC_KIND:
            continue
        _validate(manifest, version)
        kinds.add(manifest["kind"])
    assert {
        "Job", "ConfigMap", "ServiceAccount", "Namespace", "NetworkPolicy",
        "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
    } <= kinds  # fmt: skip


def test_a_benchmark_runs_job_and_code_are_valid_at_the_stacks_version():
    from tests.hyperpod_dpd.benchmark.job_factory import _run

    version = parse_settings(stack_raw("dev")).eks.kubernetes_version
    run, files = _run(), benchmark_job.code_files()
    _validate(benchmark_job.job(run, files), version)
    created = {"metadata": {"name": run.name, "uid": "0b7c7a4e-1"}}
    _validate(benchmark_job.owned_by(benchmark_job.config_map(run, files), created), version)


def test_a_misspelt_field_is_caught():
    """The check is strict: the schema refuses what the API server would."""
    from tests.hyperpod_dpd.benchmark.job_factory import _run

    manifest = benchmark_job.job(_run(), {})
    manifest["spec"]["template"]["spec"]["containers"][0]["resource"] = {}
    with pytest.raises(kubernetes_validate.ValidationError, match="'resource' was unexpected"):
        _validate(manifest, "1.33")
