"""What the stack settings accept that the cluster could not run, refused before anything exists:
a system group too small for the checkpoint staging Job (settings/cluster.py
check_system_fits_staging), and subnets too small for the nodes' addresses (settings/network.py
check_subnet_addresses). Each fix printed is applied to the same stack and parsed again."""

from __future__ import annotations

import re

import pytest

from settings import parse_settings
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
    assert "hold the staging Job's requests (4 CPU, 8 GiB" in message
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
