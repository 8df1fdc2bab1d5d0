"""What the stack settings accept that the cluster could not run, refused before anything exists:
a system group too small for the checkpoint staging Job, and subnets too small for the nodes'
addresses (settings/cluster/capacity.py). Each fix printed is applied to the same stack and parsed again."""

from __future__ import annotations

import re

import pytest

from settings import ConfigError, parse_settings
from tests.conftest import edit
from tests.settings.problems import only_problem, problems_of

NS = "hyperpod-dpd"
SYSTEM_TYPE = f"{NS}:instanceGroups.system.instanceType"
_SET = re.compile(r"pulumi config set(?: --path)? '([^']+)' (\S+)")


def fix_value(message: str, key: str) -> str:
    """The value the problem's `pulumi config set` fix gives `key`."""
    found = _SET.search(message.split("Fix:", 1)[1])
    assert found and found.group(1) == key, message
    return found.group(2)


# --- The system group and the staging Job's requests (4 CPU, 8 GiB) -------------------------


@pytest.mark.parametrize(
    ("instance_type", "short"),
    [("ml.t3.medium", "1930m CPU and 3554 MiB"), ("ml.m5.large", "1930m CPU and 7518 MiB"),
     ("ml.m5.xlarge", "3920m CPU and 15391 MiB"), ("ml.c5.xlarge", "3920m CPU and 7199 MiB")],
)  # fmt: skip
def test_a_system_group_too_small_for_the_staging_job(dev_raw, instance_type, short):
    edit(dev_raw, SYSTEM_TYPE, instance_type)
    message = only_problem(dev_raw)
    assert message.startswith(f"{SYSTEM_TYPE}: got '{instance_type}'; allowed: a type whose ")
    assert "hold the checkpoint staging Job's requests (4 CPU, 8 GiB" in message
    assert f"{instance_type} has {short} allocatable" in message


@pytest.mark.parametrize("instance_type", ["ml.m5.2xlarge", "ml.c5.2xlarge", "ml.t3.2xlarge"])
def test_the_smallest_system_types_that_hold_it_pass(dev_raw, instance_type):
    edit(dev_raw, SYSTEM_TYPE, instance_type)
    parse_settings(dev_raw)


@pytest.mark.parametrize(
    ("instance_type", "suggested"),
    [("ml.m5.large", "ml.m5.2xlarge"), ("ml.c5.xlarge", "ml.c5.2xlarge"),
     ("ml.t3.medium", "ml.t3.2xlarge")],
)  # fmt: skip
def test_the_printed_system_type_fix_makes_the_problem_go(dev_raw, instance_type, suggested):
    edit(dev_raw, SYSTEM_TYPE, instance_type)
    value = fix_value(only_problem(dev_raw), SYSTEM_TYPE)
    assert value == suggested
    edit(dev_raw, SYSTEM_TYPE, value)
    parse_settings(dev_raw)


def test_one_system_group_that_holds_it_is_enough(dev_raw):
    edit(dev_raw, SYSTEM_TYPE, "ml.m5.large")
    edit(dev_raw, f"{NS}:instanceGroups.system2", {"instanceType": "ml.m5.2xlarge",
         "instanceCount": 1, "role": "system"})  # fmt: skip
    parse_settings(dev_raw)


def test_several_system_groups_none_holding_it(dev_raw):
    edit(dev_raw, SYSTEM_TYPE, "ml.m5.large")
    edit(dev_raw, f"{NS}:instanceGroups.system2", {"instanceType": "ml.c5.xlarge",
         "instanceCount": 1, "role": "system"})  # fmt: skip
    problems = problems_of(dev_raw)
    assert len(problems) == 2, problems
    assert problems[0].startswith(f"{SYSTEM_TYPE}: got 'ml.m5.large'")
    assert problems[1].startswith(f"{NS}:instanceGroups.system2.instanceType: got 'ml.c5.xlarge'")
    assert all("one that does is enough" in p for p in problems)


# --- The subnets and the nodes' addresses ------------------------------------------------------

VPC = f"{NS}:network.vpcCidr"
DECODE_COUNT = f"{NS}:instanceGroups.decode.instanceCount"
SYSTEM_COUNT = f"{NS}:instanceGroups.system.instanceCount"


def vpc_problems(raw) -> list[str]:
    """The vpcCidr problems of `raw` (none when it parses)."""
    try:
        parse_settings(raw)
    except ConfigError as error:
        return [p.render() for p in error.problems if p.key == VPC]
    return []


def test_a_gpu_subnet_too_small_for_the_p5_nodes(dev_raw):
    """A /20 VPC: its GPU subnet, a /22, has 1019 usable addresses; 1 prefill and 7 decode p5
    nodes need 132 each (50 + 50 from the VPC CNI, 32 EFA interfaces)."""
    edit(dev_raw, VPC, "10.0.0.0/20")
    edit(dev_raw, DECODE_COUNT, 7)
    message = only_problem(dev_raw)
    assert message.startswith(f"{VPC}: got '10.0.0.0/20'; allowed: a VPC whose subnets hold")
    assert (
        "the GPU subnet 10.0.0.0/22 has 1019 usable addresses (AWS reserves 5); "
        "8 ml.p5.48xlarge need 1056 (132 each: 50 on the primary interface" in message
    )
    assert "32 on EFA interfaces" in message and "private subnets" not in message


def test_a_gpu_subnet_just_large_enough(dev_raw):
    edit(dev_raw, VPC, "10.0.0.0/20")
    edit(dev_raw, DECODE_COUNT, 6)  # 7 x 132 = 924 of 1019
    parse_settings(dev_raw)


def test_private_subnets_too_small_for_the_system_nodes(dev_raw):
    """A /20 VPC's private subnets are /25s, 123 usable each: two AZs hold 246 addresses, four
    ml.m5.4xlarge nodes (60 each: 2 x 30 IPv4 addresses per interface) and not five."""
    edit(dev_raw, VPC, "10.0.0.0/20")
    edit(dev_raw, SYSTEM_COUNT, 5)
    message = only_problem(dev_raw)
    assert message.startswith(f"{VPC}: got '10.0.0.0/20'; allowed: a VPC whose subnets hold")
    assert (
        "the 2 private subnets 10.0.4.0/25, 10.0.4.128/25 (system groups) have 246 usable "
        "addresses (123 each: AWS reserves 5 of each); 5 ml.m5.4xlarge need 300 (60 each" in message
    )
    edit(dev_raw, SYSTEM_COUNT, 4)
    parse_settings(dev_raw)


@pytest.mark.parametrize(
    ("vpc", "decode", "system", "widened"),
    [("10.0.0.0/20", 7, 1, "10.0.0.0/19"), ("10.0.16.0/20", 7, 1, "10.0.0.0/19"),
     ("192.168.0.0/20", 20, 1, "192.168.0.0/18"), ("10.0.0.0/20", 1, 5, "10.0.0.0/19"),
     ("172.16.0.0/19", 29, 12, "172.16.0.0/18")],
)  # fmt: skip
def test_the_printed_vpc_fix_makes_the_problem_go(dev_raw, vpc, decode, system, widened):
    edit(dev_raw, VPC, vpc)
    edit(dev_raw, DECODE_COUNT, decode)
    edit(dev_raw, SYSTEM_COUNT, system)
    (message,) = vpc_problems(dev_raw)
    value = fix_value(message, VPC)
    assert value == widened
    edit(dev_raw, VPC, value)
    assert vpc_problems(dev_raw) == []


def test_more_nodes_than_even_a_16_holds(dev_raw):
    # A /16's GPU subnet, a /18, has 16379 usable addresses: 124 p5 nodes fit (16368), 125 not.
    edit(dev_raw, DECODE_COUNT, 123)
    assert vpc_problems(dev_raw) == []
    edit(dev_raw, DECODE_COUNT, 124)
    (message,) = vpc_problems(dev_raw)
    assert "125 ml.p5.48xlarge need 16500" in message
    assert "Fix: even a /16 VPC cannot hold these nodes' addresses: split the groups" in message


def test_a_type_without_ec2_numbers_is_not_counted(dev_raw):
    """moto's data lacks ml.p6e-gb200.36xlarge: its nodes' addresses are unknown, not counted
    (the GPU groups of that type are refused on their own: tests/settings/placement/test_gpu_groups.py)."""
    edit(dev_raw, VPC, "10.0.0.0/20")
    edit(dev_raw, f"{NS}:instanceGroups.decode.instanceType", "ml.p6e-gb200.36xlarge")
    edit(dev_raw, f"{NS}:instanceGroups.prefill.instanceType", "ml.p6e-gb200.36xlarge")
    edit(dev_raw, DECODE_COUNT, 50)
    assert vpc_problems(dev_raw) == []


def test_a_small_system_group_is_fine_when_no_staging_job_runs(dev_raw):
    """checkpoint.staging manual: the user uploads the checkpoint, no Job is created, so nothing
    needs a system node of 4 CPU and 8 GiB."""
    edit(dev_raw, SYSTEM_TYPE, "ml.m5.xlarge")
    edit(dev_raw, f"{NS}:checkpoint.staging", "manual")
    parse_settings(dev_raw)


def test_no_control_plane_azs_is_the_zones_problem_not_a_traceback(dev_raw):
    # Found by tests/settings/test_hostile_stacks.py: no private subnets to count.
    edit(dev_raw, "hyperpod-dpd:network.controlPlaneAzIds", [])
    assert "at least two distinct AZ IDs" in only_problem(dev_raw)
