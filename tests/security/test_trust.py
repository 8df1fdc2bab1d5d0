"""Every role an AWS service assumes says on whose behalf: aws:SourceAccount (and where the
service documents it, aws:SourceArn) in its trust policy, so no other account's resource of the
same service can have it assumed (IAM: the confused deputy problem,
https://docs.aws.amazon.com/IAM/latest/UserGuide/confused-deputy.html); except where no source
shows that the service sends the key, which would keep the service itself out."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_stack, stack_raw

# Roles whose service trust carries no source condition here, each with why: a role passed to
# one resource at its creation, by a principal of this account (iam:PassRole passes a role to a
# service of the same account only:
# https://docs.aws.amazon.com/IAM/latest/UserGuide/id_roles_use_passrole.html).
UNSCOPED = {
    # EKS documents the cluster role's trust without source conditions
    # (https://docs.aws.amazon.com/eks/latest/userguide/cluster-iam-role.html).
    "eks-cluster-role": "the EKS cluster role, as EKS documents it",
    # No source shows HyperPod sends aws:SourceAccount or aws:SourceArn (infra/hyperpod.py): a
    # condition on either could keep the nodes from ever assuming their role.
    "hyperpod-execution-role": "HyperPod's instance role, as HyperPod's own templates trust it",
}
ACCOUNT = "123456789012"  # the mock engine's caller identity


def _service_statements(run):
    for role in run.of_type("aws:iam/role:Role"):
        for s in json.loads(role.inputs["assumeRolePolicy"])["Statement"]:
            services = s.get("Principal", {}).get("Service")
            if services:
                yield role.name, services if isinstance(services, list) else [services], s


@pytest.mark.parametrize("stack", ["dev", "canary"])
def test_each_service_trust_names_the_account_it_acts_for(stack):
    run = run_stack(stack_raw(stack), stack=stack)
    unscoped = [
        f"{name}: {services}"
        for name, services, s in _service_statements(run)
        if name not in UNSCOPED
        and s.get("Condition", {}).get("StringEquals", {}).get("aws:SourceAccount") != ACCOUNT
    ]
    assert not unscoped, f"service trusts without aws:SourceAccount: {unscoped}"


def test_the_hyperpod_execution_role_trusts_sagemaker_with_no_condition_it_may_not_meet():
    """HyperPod's nodes assume this role through sagemaker.amazonaws.com; no public source shows
    the service sending aws:SourceAccount or aws:SourceArn then, and AWS's HyperPod templates
    trust it with no condition (infra/hyperpod.py), so neither may gate the nodes' join."""
    run = run_stack(stack_raw("dev"))
    (statement,) = json.loads(run.named("hyperpod-execution-role").inputs["assumeRolePolicy"])[
        "Statement"
    ]
    assert statement["Principal"] == {"Service": ["sagemaker.amazonaws.com"]}
    assert "Condition" not in statement


def test_the_sagemaker_and_grafana_roles_are_for_this_accounts_resources_only():
    run = run_stack(stack_raw("dev"))
    arns = {
        name: s["Condition"]["ArnLike"]["aws:SourceArn"]
        for name, services, s in _service_statements(run)
        if "ArnLike" in s.get("Condition", {})
    }
    # Not the HyperPod execution role: HyperPod documents no source key (infra/hyperpod.py).
    assert arns == {
        "inference-operator-execution-role": f"arn:aws:sagemaker:us-east-2:{ACCOUNT}:*",
        "observability-grafana-role": f"arn:aws:grafana:us-east-2:{ACCOUNT}:/workspaces/*",
        "network-flow-logs-role": f"arn:aws:ec2:us-east-2:{ACCOUNT}:vpc-flow-log/*",
        "ci-runner-role": f"arn:aws:codebuild:us-east-2:{ACCOUNT}:project/hyperpod-dpd-dev-runner",
    }
