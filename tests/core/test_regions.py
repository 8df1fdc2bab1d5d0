from __future__ import annotations

import pytest

from core.regions import az_id_in_region, az_id_prefix


@pytest.mark.parametrize(
    ("region", "prefix"),
    [
        ("us-east-1", "use1"),
        ("us-east-2", "use2"),
        ("us-west-2", "usw2"),
        ("eu-central-1", "euc1"),
        ("eu-west-1", "euw1"),
        ("eu-north-1", "eun1"),
        ("ap-northeast-1", "apne1"),
        ("ap-southeast-2", "apse2"),
        ("ap-south-1", "aps1"),
        ("sa-east-1", "sae1"),
        ("ca-central-1", "cac1"),
        ("us-gov-west-1", "usgw1"),
    ],
)
def test_az_id_prefix_matches_aws_naming(region, prefix):
    assert az_id_prefix(region) == prefix


def test_az_id_in_region():
    assert az_id_in_region("use2-az2", "us-east-2")
    assert not az_id_in_region("use1-az2", "us-east-2")
    assert not az_id_in_region("apse1-az1", "ap-south-1")


@pytest.mark.parametrize("bad", ["Ohio", "us-east", "us-upward-1"])
def test_bad_region(bad):
    with pytest.raises(ValueError):
        az_id_prefix(bad)
