from __future__ import annotations

import ipaddress
import itertools

import pytest

from core.aws.subnets import plan_subnets


@pytest.mark.parametrize("vpc", ["10.0.0.0/16", "172.16.0.0/18", "192.168.0.0/20"])
def test_subnets_fit_the_vpc_and_never_overlap(vpc):
    plans = plan_subnets(vpc, "use2-az2", ["use2-az1", "use2-az2", "use2-az3"])
    nets = [ipaddress.IPv4Network(p.cidr) for p in plans]
    assert all(n.subnet_of(ipaddress.IPv4Network(vpc)) for n in nets)
    assert not any(a.overlaps(b) for a, b in itertools.combinations(nets, 2))


def test_one_gpu_subnet_in_the_gpu_az_and_it_is_the_largest():
    plans = plan_subnets("10.0.0.0/16", "use2-az2", ["use2-az1", "use2-az3"])
    gpu = [p for p in plans if p.tier == "gpu"]
    assert [(p.az_id, p.cidr) for p in gpu] == [("use2-az2", "10.0.0.0/18")]
    assert {p.az_id for p in plans if p.tier == "private"} == {"use2-az1", "use2-az3"}
    assert {p.az_id for p in plans if p.tier == "public"} == {"use2-az1", "use2-az2", "use2-az3"}


def test_adding_an_az_changes_no_existing_subnet():
    before = {
        p.key: p.cidr for p in plan_subnets("10.0.0.0/16", "use2-az2", ["use2-az1", "use2-az2"])
    }
    after = {
        p.key: p.cidr
        for p in plan_subnets("10.0.0.0/16", "use2-az2", ["use2-az1", "use2-az2", "use2-az3"])
    }
    assert {k: after[k] for k in before} == before
