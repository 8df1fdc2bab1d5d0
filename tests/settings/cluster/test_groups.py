"""Cluster checks: roles present, the system group x86_64, pinned Kubernetes, HyperPod group
names, one access entry per role."""

from __future__ import annotations

import re

import pytest

from settings import parse_settings
from tests.conftest import canary_raw, edit
from tests.settings.problems import only_problem, problems_of

NS = "hyperpod-dpd"


@pytest.mark.parametrize("role", ["prefill", "decode", "system"])
def test_dpd_needs_every_role(dev_raw, role):
    edit(dev_raw, f"{NS}:instanceGroups.{role}")
    message = only_problem(dev_raw)
    assert message.startswith("hyperpod-dpd:instanceGroups: got [")
    assert f"at least one group with role '{role}'" in message


def test_colocated_needs_only_a_gpu_group_and_system(dev_raw):
    edit(dev_raw, f"{NS}:endpoint.mode", "colocated")
    edit(dev_raw, f"{NS}:endpoint.replicas", 1)  # the one decode node
    edit(dev_raw, f"{NS}:instanceGroups.prefill")
    assert parse_settings(dev_raw).endpoint.mode == "colocated"
    edit(dev_raw, f"{NS}:instanceGroups.decode")
    assert "at least one GPU group" in only_problem(dev_raw)


def test_system_group_must_be_x86(dev_raw):
    edit(dev_raw, f"{NS}:instanceGroups.system.instanceType", "ml.m7g.4xlarge")
    message = only_problem(dev_raw)
    assert message.startswith(
        "hyperpod-dpd:instanceGroups.system.instanceType: got 'ml.m7g.4xlarge'"
    )
    assert "amd64 only" in message


def test_kubernetes_version_must_have_pinned_addons(dev_raw):
    edit(dev_raw, f"{NS}:eks.kubernetesVersion", "1.34")
    message = only_problem(dev_raw)
    assert message.startswith("hyperpod-dpd:eks.kubernetesVersion: got '1.34'")
    assert "1.33" in message and "mpi-operator" in message


def test_group_name_pattern_matches_botocore_sagemaker_model():
    import botocore.session

    from settings.config.fields import GROUP_NAME_PATTERN

    model = botocore.session.get_session().get_service_model("sagemaker")
    shape = model.shape_for("ClusterInstanceGroupName")
    names = ["prefill", "decode-1", "a--b", "A9", "-x", "x-", "x_y", "a" * 63, "a" * 64, ""]
    for name in names:
        theirs = (
            bool(re.fullmatch(shape.metadata["pattern"], name))
            and len(name) <= shape.metadata["max"]
        )
        ours = bool(re.fullmatch(GROUP_NAME_PATTERN, name))
        assert ours == theirs, name


@pytest.mark.parametrize("name", ["-prefill", "pre_fill", "a" * 64])
def test_group_names_hyperpod_rejects(dev_raw, name):
    dev_raw[f"{NS}:instanceGroups"][name] = dev_raw[f"{NS}:instanceGroups"].pop("prefill")
    message = only_problem(dev_raw)
    assert message.startswith(f"hyperpod-dpd:instanceGroups.{name}")


def test_two_admin_roles_of_one_name_are_refused(dev_raw):
    arns = [
        "arn:aws:iam::111122223333:role/PlatformAdmin",
        "arn:aws:iam::444455556666:role/platformadmin",
    ]
    message = only_problem(edit(dev_raw, f"{NS}:eks.adminRoleArns", arns))
    assert message.startswith("hyperpod-dpd:eks.adminRoleArns: got [")
    assert "eks-admin-<role name>; these both map to 'platformadmin'" in message


def test_a_role_both_admin_and_viewer_is_refused(dev_raw):
    arn = "arn:aws:iam::111122223333:role/PlatformAdmin"
    message = only_problem(edit(dev_raw, f"{NS}:eks.viewRoleArns", [arn]))
    assert message.startswith("hyperpod-dpd:eks.viewRoleArns: got [")
    assert "one access entry per role" in message


def test_an_old_operator_in_a_stack_of_several_endpoints_names_the_dpd_endpoints_mode():
    """The alternative to a newer operator is colocated mode for the DPD endpoints: in
    Pulumi.canary.yaml that is endpoints.candidate.mode (hyperpod-dpd:endpoint is not used)."""
    raw = edit(canary_raw(), "hyperpod-dpd:inferenceOperator.version", "3.1")
    [old] = [p for p in problems_of(raw) if "3.2 or newer" in p]
    assert "or set hyperpod-dpd:endpoints.candidate.mode to colocated" in old
    assert "hyperpod-dpd:endpoint.mode" not in old
