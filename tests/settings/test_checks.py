"""Cross-field config checks: AZs versus Region, roles present, checkpoint revision pinned."""

from __future__ import annotations

import copy
import re

import pytest

from settings import ConfigError, parse_settings
from tests.conftest import edit

NS = "hyperpod-dpd"


def only_problem(raw) -> str:
    with pytest.raises(ConfigError) as info:
        parse_settings(raw)
    assert len(info.value.problems) == 1, info.value.problems
    return info.value.problems[0].render()


def test_gpu_az_must_be_in_the_region(dev_raw):
    message = only_problem(edit(dev_raw, f"{NS}:availabilityZoneId", "use1-az2"))
    assert message.startswith(
        "hyperpod-dpd:availabilityZoneId: got 'use1-az2'; allowed: an AZ ID of aws:region "
        "us-east-2 (use2-azN)."
    )
    assert "pulumi config set 'hyperpod-dpd:availabilityZoneId' use2-az1" in message


def test_control_plane_azs_must_be_in_the_region(dev_raw):
    message = only_problem(
        edit(dev_raw, f"{NS}:network.controlPlaneAzIds", ["use2-az1", "usw2-az1"])
    )
    assert message.startswith("hyperpod-dpd:network.controlPlaneAzIds: got [")
    assert "AZ IDs of aws:region us-east-2" in message


@pytest.mark.parametrize("ids", [["use2-az1"], ["use2-az1", "use2-az1"]])
def test_control_plane_needs_two_distinct_azs(dev_raw, ids):
    message = only_problem(edit(dev_raw, f"{NS}:network.controlPlaneAzIds", ids))
    assert "at least two distinct AZ IDs" in message
    assert '["use2-az1", "use2-az2"]' in message


@pytest.mark.parametrize("cidr", ["10.0.0.0/8", "10.0.0.0/24", "8.8.0.0/16", "10.0.0.1/16"])
def test_vpc_cidr_size_and_range(dev_raw, cidr):
    message = only_problem(edit(dev_raw, f"{NS}:network.vpcCidr", cidr))
    assert message.startswith(f"hyperpod-dpd:network.vpcCidr: got '{cidr}'")


@pytest.mark.parametrize("role", ["prefill", "decode", "system"])
def test_dpd_needs_every_role(dev_raw, role):
    edit(dev_raw, f"{NS}:instanceGroups.{role}")
    message = only_problem(dev_raw)
    assert message.startswith("hyperpod-dpd:instanceGroups: got [")
    assert f"at least one group with role '{role}'" in message


def test_colocated_needs_only_a_gpu_group_and_system(dev_raw):
    edit(dev_raw, f"{NS}:endpoint.mode", "colocated")
    edit(dev_raw, f"{NS}:instanceGroups.prefill")
    assert parse_settings(dev_raw).endpoint.mode == "colocated"
    edit(dev_raw, f"{NS}:instanceGroups.decode")
    assert "at least one GPU group" in only_problem(dev_raw)


@pytest.mark.parametrize("revision", [None, "main", "6f6073b4"])
def test_hf_source_needs_a_commit_sha(dev_raw, revision):
    edit(dev_raw, f"{NS}:checkpoint.revision", revision)
    message = only_problem(dev_raw)
    assert message.startswith("hyperpod-dpd:checkpoint.revision: ")
    assert "a 40-hex commit SHA for hf:// sources" in message


@pytest.mark.parametrize("source", ["hf://meta-llama", "s3://Bad_Bucket/x", "gs://bucket/model"])
def test_malformed_sources(dev_raw, source):
    edit(dev_raw, f"{NS}:checkpoint.source", source)
    assert only_problem(dev_raw).startswith(f"hyperpod-dpd:checkpoint.source: got '{source}'")


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

    from settings.fields import GROUP_NAME_PATTERN

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


def test_a_step_budget_below_the_batch_is_refused_with_a_value_vllm_starts_with(dev_raw):
    edit(dev_raw, f"{NS}:endpoint.colocated", {"maxNumBatchedTokens": 16})
    message = only_problem(dev_raw)
    assert message.startswith("hyperpod-dpd:endpoint.colocated.maxNumBatchedTokens: got 16;")
    assert "at least endpoint.decode.maxNumSeqs (32)" in message
    assert "2048" in message


def test_a_chunked_prefill_flag_given_twice_names_both_keys(dev_raw):
    edit(dev_raw, f"{NS}:endpoint.colocated", {"maxNumBatchedTokens": 4096})
    edit(dev_raw, f"{NS}:endpoint.decode.args", ["--max-num-batched-tokens=8192"])
    message = only_problem(dev_raw)
    assert "hyperpod-dpd:endpoint.colocated.maxNumBatchedTokens" in message
    assert "remove --max-num-batched-tokens from hyperpod-dpd:endpoint.decode.args" in message


@pytest.mark.parametrize("key", ["maxNumBatchedTokens", "maxNumPartialPrefills",
                                 "longPrefillTokenThreshold"])  # fmt: skip
def test_chunked_prefill_knobs_are_positive_whole_numbers(dev_raw, key):
    for bad in (0, "2048", 1.5):
        raw = edit(copy.deepcopy(dev_raw), f"{NS}:endpoint.colocated", {key: bad})
        assert only_problem(raw).startswith(f"hyperpod-dpd:endpoint.colocated.{key}: got")
