"""Network checks: the GPU and control-plane AZs versus the Region, the VPC CIDR."""

from __future__ import annotations

import json

import pytest

from settings import parse_settings
from tests.conftest import edit
from tests.settings.problems import only_problem, problems_of

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


def test_control_plane_needs_two_distinct_azs(dev_raw):
    message = only_problem(edit(dev_raw, f"{NS}:network.controlPlaneAzIds", ["use2-az1"]))
    assert "at least two distinct AZ IDs" in message
    assert '["use2-az1", "use2-az2"]' in message


def test_one_az_twice_is_a_repeated_entry_and_still_one_az(dev_raw):
    """The repeat by index (settings/config/unique.py), and the second AZ still missing."""
    ids = ["use2-az1", "use2-az1"]
    repeated, distinct = problems_of(edit(dev_raw, f"{NS}:network.controlPlaneAzIds", ids))
    assert repeated.startswith(f"{NS}:network.controlPlaneAzIds[1]: got 'use2-az1'; allowed: ")
    assert "at least two distinct AZ IDs" in distinct


@pytest.mark.parametrize(
    "cidr",
    ["10.0.0.0/8", "10.0.0.0/24", "8.8.0.0/16", "10.0.0.1/16",
     # Python's is_private takes these; RFC 1918 (and a VPC that routes) does not.
     "169.254.0.0/16", "127.0.0.0/16", "0.0.0.0/16", "100.64.0.0/16"],
)  # fmt: skip
def test_vpc_cidr_size_and_range(dev_raw, cidr):
    message = only_problem(edit(dev_raw, f"{NS}:network.vpcCidr", cidr))
    assert message.startswith(f"hyperpod-dpd:network.vpcCidr: got '{cidr}'")


@pytest.mark.parametrize(
    "cidr", ["10.0.0.0/16", "172.16.0.0/16", "172.31.0.0/20", "192.168.0.0/16"]
)
def test_rfc_1918_vpcs_pass(dev_raw, cidr):
    parse_settings(edit(dev_raw, f"{NS}:network.vpcCidr", cidr))


@pytest.mark.parametrize(
    ("region", "ids", "fixed"),
    [("us-east-1", ["use1-az3", "use1-az6"], '["use1-az1", "use1-az6"]'),
     ("us-west-1", ["usw1-az1", "usw1-az2"], '["usw1-az1", "usw1-az3"]'),
     ("ca-central-1", ["cac1-az1", "cac1-az3"], '["cac1-az1", "cac1-az2"]')],
)  # fmt: skip
def test_a_control_plane_az_eks_refuses(dev_raw, region, ids, fixed):
    """EKS places no cluster interfaces in these AZs (UnsupportedAvailabilityZoneException)."""
    edit(dev_raw, "aws:region", region)
    edit(dev_raw, f"{NS}:availabilityZoneId", ids[0])
    message = only_problem(edit(dev_raw, f"{NS}:network.controlPlaneAzIds", ids))
    assert message.startswith(f"hyperpod-dpd:network.controlPlaneAzIds: got {json.dumps(ids)}")
    assert "UnsupportedAvailabilityZoneException" in message
    assert f"set hyperpod-dpd:network.controlPlaneAzIds to {fixed}" in message
    # The printed fix, applied: nothing left to refuse.
    parse_settings(edit(dev_raw, f"{NS}:network.controlPlaneAzIds", json.loads(fixed)))
