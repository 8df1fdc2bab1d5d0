"""Regenerate core/aws/elb_accounts.py: the Elastic Load Balancing account of each Region that
delivers access logs as an AWS account, from the map `aws.elb.get_service_account` answers from.

  python scripts/extract_elb_accounts.py FILE --commit SHA

FILE is internal/service/elb/service_account_data_source.go of hashicorp/terraform-provider-aws
at commit SHA (pulumi-aws bridges that provider: its getServiceAccount invoke reads the same
map), e.g. from a checkout or `https://raw.githubusercontent.com/hashicorp/terraform-provider-aws/SHA/<path>`.
botocore does not carry these ids. The ELB user guide lists the same accounts ("Enable access
logs for your Application Load Balancer": the Regions available before August 2022); a Region
the map lacks delivers as the service principal logdelivery.elasticloadbalancing.amazonaws.com.
The program uses the table rather than the invoke: the bucket policy is then known to the
policy gate and the scanners before anything exists, and a newer Region, which the invoke
refuses ("unsupported AWS Region"), still gets its documented principal.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a file from any directory, installed or not

from scripts.extract_aws_facts import _formatted as formatted  # noqa: E402

TARGET = ROOT / "core" / "aws" / "elb_accounts.py"
UPSTREAM = "hashicorp/terraform-provider-aws"
UPSTREAM_PATH = "internal/service/elb/service_account_data_source.go"
# An entry of accountIDPerRegionMap: `endpoints.UsEast2RegionID: "033677994240",` (a commented
# line, a Region whose id the provider does not know, is skipped).
ENTRY = re.compile(r'^\s*endpoints\.([A-Za-z0-9]+)RegionID:\s*"([0-9]{12})",', re.MULTILINE)


def region_name(constant: str) -> str:
    """aws-sdk-go-base's Region constant without `RegionID` -> the Region's name:
    UsGovEast1 -> us-gov-east-1, ApNortheast3 -> ap-northeast-3."""
    return "-".join(part.lower() for part in re.findall(r"[A-Z][a-z]*|[0-9]+", constant))


def accounts(go_source: str) -> dict[str, str]:
    """Region -> ELB account id, from the provider's accountIDPerRegionMap."""
    body = go_source.split("accountIDPerRegionMap", 1)[1].split("\n}", 1)[0]
    found = {region_name(name): account for name, account in ENTRY.findall(body)}
    if not found:
        raise SystemExit("no accountIDPerRegionMap entries found: is this the right file?")
    return dict(sorted(found.items()))


def render(go_source: str, commit: str) -> str:
    table = accounts(go_source)
    source = f"https://github.com/{UPSTREAM}/blob/{commit}/{UPSTREAM_PATH}"
    lines = [
        '"""The AWS account through which Elastic Load Balancing delivers access logs in each',
        "Region launched before August 2022 (generated: python scripts/extract_elb_accounts.py,",
        f"from {UPSTREAM} {UPSTREAM_PATH} at {commit[:12]}; do not edit).",
        "",
        'The ELB user guide lists the same ids ("Enable access logs for your Application Load',
        'Balancer", https://docs.aws.amazon.com/elasticloadbalancing/latest/application/enable-access-logging.html);',
        "a Region not listed delivers as logdelivery.elasticloadbalancing.amazonaws.com.",
        '"""',
        "",
        f"SOURCE = {source!r}",
        "ELB_LOG_ACCOUNTS = {",
        *(f"    {region!r}: {account!r}," for region, account in table.items()),
        "}",
        "",
    ]
    return formatted(TARGET, lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("file", type=Path, help=f"{UPSTREAM_PATH} of {UPSTREAM}")
    parser.add_argument("--commit", required=True, help="the commit FILE was taken from")
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = parser.parse_args()
    text = render(args.file.read_text(), args.commit)
    if args.check:
        if not TARGET.exists() or TARGET.read_text() != text:
            print(f"{TARGET} is stale: run python scripts/extract_elb_accounts.py", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
