"""Least exposure in the pods the stacks create: every namespace enforces a Pod Security level
pinned to the cluster's Kubernetes version (`restricted` where the stack's own Jobs run), the
staging Job's and the benchmark runs' pods meet `restricted`, and the Jobs' pods get no
Kubernetes API token (IRSA's web identity token is the webhook's own volume)."""

from __future__ import annotations

import pytest

from core.vocabulary import BENCHMARK_NAMESPACE, STAGING_NAMESPACE
from hyperpod_dpd.benchmark import job as benchmark_job
from hyperpod_dpd.plan.planner import kubernetes_manifests
from settings import parse_settings
from tests.conftest import run_stack, stack_raw

PSA = "pod-security.kubernetes.io"
# The volume types `restricted` allows
# (https://kubernetes.io/docs/concepts/security/pod-security-standards/#restricted).
RESTRICTED_VOLUMES = {
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
}


@pytest.fixture(scope="module", params=["dev", "prod", "canary"])
def plan(request):
    raw = stack_raw(request.param) | {"hyperpod-dpd:hfToken": "hf_" + "x" * 34}
    run = run_stack(raw, stack=request.param, secret_keys=["hyperpod-dpd:hfToken"])
    return parse_settings(stack_raw(request.param)).eks.kubernetes_version, kubernetes_manifests(
        run
    )


def _of_kind(manifests, kind):
    return [m for m in manifests.values() if m["kind"] == kind]


def test_every_namespace_enforces_a_level_pinned_to_the_clusters_version(plan):
    version, manifests = plan
    namespaces = {
        m["metadata"]["name"]: m["metadata"]["labels"] for m in _of_kind(manifests, "Namespace")
    }
    assert {STAGING_NAMESPACE, BENCHMARK_NAMESPACE} <= set(namespaces) and len(namespaces) >= 3
    for name, labels in namespaces.items():
        assert labels[f"{PSA}/enforce-version"] == f"v{version}", name
        strict = name in (STAGING_NAMESPACE, BENCHMARK_NAMESPACE)
        assert labels[f"{PSA}/enforce"] == ("restricted" if strict else "privileged"), name
        # What a stricter level would refuse shows in warnings and the audit log.
        assert (
            labels[f"{PSA}/warn"]
            == labels[f"{PSA}/audit"]
            == ("restricted" if strict else "baseline")
        ), name


def _meets_restricted(pod):
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    for container in pod["containers"]:
        context = container["securityContext"]
        assert context["allowPrivilegeEscalation"] is False
        assert context["capabilities"] == {"drop": ["ALL"]}
    for volume in pod["volumes"]:
        (kind,) = set(volume) - {"name"}
        assert kind in RESTRICTED_VOLUMES, volume
    assert not {"hostNetwork", "hostPID", "hostIPC"} & set(pod)


def test_the_staging_pod_meets_restricted(plan):
    _, manifests = plan
    (job,) = _of_kind(manifests, "Job")
    _meets_restricted(job["spec"]["template"]["spec"])


def test_the_benchmark_runners_pod_meets_restricted():
    """Its namespace enforces `restricted` (specs/benchmark.py): a pod that did not would never
    start, and `benchmark run` would wait for it until its deadline."""
    from tests.hyperpod_dpd.benchmark.job_factory import _run

    job = benchmark_job.job(_run(), benchmark_job.code_files())
    assert job["metadata"]["namespace"] == BENCHMARK_NAMESPACE
    _meets_restricted(job["spec"]["template"]["spec"])


def test_the_staging_pod_gets_no_api_token(plan):
    _, manifests = plan
    (job,) = _of_kind(manifests, "Job")
    assert job["spec"]["template"]["spec"]["automountServiceAccountToken"] is False


def test_the_benchmark_runners_pod_gets_no_api_token():
    from tests.hyperpod_dpd.benchmark.job_factory import _run

    pod = benchmark_job.job(_run(), {})["spec"]["template"]["spec"]
    assert pod["automountServiceAccountToken"] is False
    assert pod["serviceAccountName"]  # its IRSA role still applies (the webhook's own token)
