"""Network checks: the GPU and control-plane AZs versus the Region, the VPC CIDR."""

from __future__ import annotations

import pytest

from tests.conftest import edit
from tests.settings.problems import only_problem

NS = "hyperpod-dpd"


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
