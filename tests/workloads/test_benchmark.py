"""What in-cluster benchmark runs run as: one role, its account in the stack's benchmark
namespace (never an endpoint's: only the operator's pods run there), whichever namespaces the
endpoints use."""

from __future__ import annotations

import json

from core.vocabulary import BENCHMARK_NAMESPACE
from tests.conftest import canary_raw, edit, run_stack, stack_raw

NS = "hyperpod-dpd"
ACCOUNT = "kubernetes:core/v1:ServiceAccount"
RUNNER = f"system:serviceaccount:{BENCHMARK_NAMESPACE}:benchmark-runner"


def _runner_accounts(run):
    return sorted(
        (r.name, r.inputs["metadata"]["namespace"])
        for r in run.of_type(ACCOUNT)
        if r.inputs["metadata"]["name"] == "benchmark-runner"
    )


def _subjects(run):
    trust = json.loads(run.named("benchmark-role").inputs["assumeRolePolicy"])
    (statement,) = trust["Statement"]
    (condition,) = [
        v for k, v in statement["Condition"]["StringEquals"].items() if k.endswith(":sub")
    ]
    return condition


def test_the_runner_lives_in_the_benchmark_namespace_not_the_endpoints():
    run = run_stack(stack_raw("dev"))
    assert _runner_accounts(run) == [("benchmark-service-account", BENCHMARK_NAMESPACE)]
    assert _subjects(run) == RUNNER
    namespace = run.named("benchmark-namespace").inputs
    assert namespace["metadata"]["name"] == BENCHMARK_NAMESPACE
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"


def test_endpoints_in_several_namespaces_share_the_one_account():
    # `benchmark run --endpoint candidate` starts its Job in the benchmark namespace too: the
    # role trusts that one account, wherever the endpoints run.
    raw = canary_raw()
    edit(raw, f"{NS}:endpoints.candidate.namespace", "canary")
    run = run_stack(raw, stack="canary")
    assert _runner_accounts(run) == [("benchmark-service-account", BENCHMARK_NAMESPACE)]
    assert _subjects(run) == RUNNER


def test_the_account_exists_only_once_its_pods_are_kept_from_the_instance_metadata_service():
    run = run_stack(stack_raw("dev"))
    account = run.named("benchmark-service-account")
    assert any(d.endswith("::benchmark-metadata-egress") for d in account.depends_on)


def test_the_splits_api_key_waits_in_the_clients_namespace_not_the_endpoints():
    """The stack's in-cluster clients (the runs, verify's prompt pods) run in the benchmark
    namespace, so that is where the split's key is kept for them; no endpoint namespace holds
    it (its pods never present it)."""
    run = run_stack(canary_raw(), stack="canary")
    (secret,) = run.of_type("kubernetes:core/v1:Secret")
    assert secret.inputs["metadata"]["namespace"] == BENCHMARK_NAMESPACE
    assert any(d.endswith("::benchmark-namespace") for d in secret.depends_on)
