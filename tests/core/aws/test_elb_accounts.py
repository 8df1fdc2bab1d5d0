"""The ELB account per Region (core/aws/elb_accounts.py), generated from the map
terraform-provider-aws answers `aws.elb.get_service_account` from (scripts/extract_elb_accounts.py),
checked here against the ELB user guide's own list."""

from __future__ import annotations

from core.aws.elb_accounts import ELB_LOG_ACCOUNTS, SOURCE
from scripts import extract_elb_accounts as script

# The provider's map as its file writes it: a Region it has no id for is a commented line.
SNIPPET = """
var accountIDPerRegionMap = map[string]string{
\tendpoints.ApNortheast3RegionID: "383597477331",
\t// endpoints.MeCentral1RegionID:   "",
\tendpoints.UsGovEast1RegionID: "190560391635",
\tendpoints.UsEast2RegionID:    "033677994240",
}
"""


def test_the_provider_map_is_read_region_by_region():
    assert script.accounts(SNIPPET) == {
        "ap-northeast-3": "383597477331",
        "us-east-2": "033677994240",
        "us-gov-east-1": "190560391635",
    }


def test_the_table_says_where_it_comes_from_and_agrees_with_the_elb_guide():
    assert SOURCE.startswith("https://github.com/hashicorp/terraform-provider-aws/blob/")
    # "Enable access logs for your Application Load Balancer", the Regions available before
    # August 2022 (https://docs.aws.amazon.com/elasticloadbalancing/latest/application/enable-access-logging.html).
    guide = {"us-east-1": "127311923021", "us-east-2": "033677994240",
             "us-west-2": "797873946194", "eu-west-1": "156460612806",
             "ap-northeast-1": "582318560864", "me-south-1": "076674570225",
             "us-gov-west-1": "048591011584"}  # fmt: skip
    assert guide.items() <= ELB_LOG_ACCOUNTS.items()
    # Launched since August 2022: delivered by the service principal, no account.
    assert not {"me-central-1", "ap-south-2", "eu-central-2", "il-central-1"} & set(
        ELB_LOG_ACCOUNTS
    )
