"""What the rule tests share: each rule by name, the URNs of the endpoint's IEC and of the
HyperPod cluster (the two resources most rules judge), `findings` (what one rule reports on
the views, as (urn, message) pairs) and `_set_arg` (one worker flag rewritten in place).
The views themselves come from the happy-path factory in tests/policies/conftest.py."""

from __future__ import annotations

from policies.rules import ALL_RULES, Limits
from tests.policies.conftest import iec_spec

RULES = {r.name: r for r in ALL_RULES}
IEC_URN = "urn:pulumi:dev::hyperpod-dpd::hyperpod-dpd:workloads:InferenceEndpoint$kubernetes:inference.sagemaker.aws.amazon.com/v1:InferenceEndpointConfig::endpoint-iec"
CLUSTER_URN = "urn:pulumi:dev::hyperpod-dpd::hyperpod-dpd:infra:HyperPodCluster$aws-native:sagemaker:Cluster::hyperpod-cluster"


def findings(rule: str, views, limits: Limits | None = None) -> list[tuple[str, str]]:
    return [(f.urn, f.message) for f in RULES[rule].check(views, limits or Limits())]


def _set_arg(views, flag, value):
    args = iec_spec(views)["worker"]["args"]
    args[args.index(flag) + 1] = value
