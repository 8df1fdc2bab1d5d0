"""networkPolicy (settings/cluster/pod_network.py): allowCidrs reaching into the GPU subnet is
refused, naming the entry and the way to open the workers on purpose; the fix followed passes."""

from __future__ import annotations

import pytest

from settings import parse_settings
from tests.settings.problems import followed, only_problem

NS = "hyperpod-dpd"


@pytest.mark.parametrize("cidr", ["10.0.0.0/8", "10.0.5.0/24", "0.0.0.0/0"])
def test_an_allowed_range_over_the_gpu_pods_is_refused(dev_raw, cidr):
    raw = dev_raw | {f"{NS}:networkPolicy": {"allowCidrs": ["10.0.64.0/24", cidr]}}
    message = only_problem(raw)
    assert message.startswith(f"{NS}:networkPolicy.allowCidrs[1]: got '{cidr}'")
    assert "outside the GPU subnet 10.0.0.0/18" in message
    parse_settings(followed(raw, message))  # networkPolicy.enabled false: nothing to refuse


def test_a_load_balancers_own_subnet_is_taken(dev_raw):
    raw = dev_raw | {f"{NS}:networkPolicy": {"allowCidrs": ["10.0.64.0/24", "10.0.128.0/21"]}}
    assert parse_settings(raw).network_policy.allow_cidrs == ["10.0.64.0/24", "10.0.128.0/21"]
