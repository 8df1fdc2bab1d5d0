"""The load balancers in front of an endpoint outlast its longest generation: a non-streaming
answer arrives whole at the end, so an idle timeout shorter than the generation is a 504. The
split's ALB takes the longest of its endpoints' `idleTimeoutSeconds`, each IEC its own (from
operator 3.3, whose CRD has loadBalancer.idleTimeoutSeconds), both within ALB's 1-4000 s."""

from __future__ import annotations

import pytest

from core.versions import OPERATOR_ADDON_VERSIONS
from core.vocabulary import ALB_IDLE_TIMEOUT_MAX, ROUTER_HEALTH_PATH
from settings import parse_settings
from specs.endpoint import ClusterFacts, build_endpoint
from specs.traffic import traffic_split
from tests.conftest import canary_raw, edit
from tests.settings.problems import only_problem

NS = "hyperpod-dpd"
FACTS = ClusterFacts(model_bucket="models-bucket", az_name="us-east-2b")


def _split(raw):
    s = parse_settings(raw)
    return s, traffic_split("traffic", s, "vpc-1", "subnet-1", {})


def test_by_default_the_split_and_each_endpoint_wait_as_long_as_an_alb_can():
    s, split = _split(canary_raw())
    assert split.load_balancer.props["idleTimeout"] == ALB_IDLE_TIMEOUT_MAX == 4000
    for entry in s.entries():
        lb = build_endpoint(s, FACTS, entry=entry).to_manifest()["spec"]["loadBalancer"]
        assert lb == {"healthCheckPath": ROUTER_HEALTH_PATH, "idleTimeoutSeconds": 4000}
    for group in split.target_groups.values():
        assert group.props["healthCheck"]["path"] == ROUTER_HEALTH_PATH


def test_the_split_waits_for_its_slowest_endpoint_and_each_iec_for_its_own():
    raw = canary_raw()
    edit(raw, f"{NS}:endpoints.baseline.idleTimeoutSeconds", 1200)
    edit(raw, f"{NS}:endpoints.candidate.idleTimeoutSeconds", 900)
    s, split = _split(raw)
    assert split.load_balancer.props["idleTimeout"] == 1200
    own = {
        e.key: build_endpoint(s, FACTS, entry=e).to_manifest()["spec"]["loadBalancer"]
        for e in s.entries()
    }
    assert {k: v["idleTimeoutSeconds"] for k, v in own.items()} == {
        "baseline": 1200,
        "candidate": 900,
    }


def test_an_operator_without_the_field_gets_none():
    raw = canary_raw()
    edit(
        raw,
        f"{NS}:inferenceOperator",
        {"version": "3.2", "addonVersion": OPERATOR_ADDON_VERSIONS["3.2"]},
    )
    s = parse_settings(raw)
    lb = build_endpoint(s, FACTS, entry=s.entries()[0]).to_manifest()["spec"]["loadBalancer"]
    assert lb == {"healthCheckPath": ROUTER_HEALTH_PATH}


@pytest.mark.parametrize("seconds", [0, 4001])
def test_a_timeout_alb_does_not_take_is_refused_naming_the_key(seconds):
    raw = canary_raw()
    edit(raw, f"{NS}:endpoints.candidate.idleTimeoutSeconds", seconds)
    message = only_problem(raw)
    assert message.startswith(f"{NS}:endpoints.candidate.idleTimeoutSeconds: got {seconds}; ")
