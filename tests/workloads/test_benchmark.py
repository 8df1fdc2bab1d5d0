"""What in-cluster benchmark runs run as: one role, its account beside every endpoint."""

from __future__ import annotations

import json

from tests.conftest import canary_raw, edit, run_stack, stack_raw

NS = "hyperpod-dpd"
ACCOUNT = "kubernetes:core/v1:ServiceAccount"


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


def test_one_endpoint_keeps_its_one_account():
    run = run_stack(stack_raw("dev"))
    assert _runner_accounts(run) == [("benchmark-service-account", "inference")]
    assert _subjects(run) == "system:serviceaccount:inference:benchmark-runner"


def test_an_endpoint_in_another_namespace_gets_the_account_there_too():
    # `benchmark run --endpoint candidate` starts its Job in the candidate's namespace, as the
    # account it names: pulumi up must have made it there, trusted by the same role.
    raw = canary_raw()
    edit(raw, f"{NS}:endpoints.candidate.namespace", "canary")
    run = run_stack(raw, stack="canary")
    assert _runner_accounts(run) == [
        ("benchmark-canary-service-account", "canary"),
        ("benchmark-service-account", "inference"),
    ]
    assert _subjects(run) == [
        "system:serviceaccount:inference:benchmark-runner",
        "system:serviceaccount:canary:benchmark-runner",
    ]
