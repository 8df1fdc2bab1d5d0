"""hyperpod-dpd-instance-type (policies/rules/cluster/instance_type.py): a DPD endpoint and its GPU
groups on a type that does not support DPD, with the exact message; colocated endpoints
and colocated groups may use other types."""

from __future__ import annotations

from core.vocabulary import ROLE_LABEL
from tests.policies.conftest import gpu_group, iec_spec, named
from tests.policies.rules.helpers import CLUSTER_URN, IEC_URN, findings


def test_instance_type_on_the_endpoint(dev):
    iec_spec(dev)["instanceType"] = "ml.g6e.48xlarge"
    assert findings("hyperpod-dpd-instance-type", dev) == [
        (
            IEC_URN,
            "endpoint instance type ml.g6e.48xlarge does not support DPD (allowed: ml.p5.48xlarge, "
            "ml.p5e.48xlarge, ml.p5en.48xlarge, ml.p6-b200.48xlarge, ml.p6-b300.48xlarge); set "
            "hyperpod-dpd:instanceGroups.<group>.instanceType to ml.p5.48xlarge (or another of "
            "them), or set hyperpod-dpd:endpoint.mode to colocated",
        )
    ]


def test_instance_type_of_a_gpu_group(dev):
    gpu_group(dev, "prefill")["instanceType"] = "ml.g6e.48xlarge"
    ((urn, message),) = findings("hyperpod-dpd-instance-type", dev)
    assert urn == CLUSTER_URN
    assert message.startswith(
        "instance group prefill (prefill) uses ml.g6e.48xlarge, which does not support DPD"
    )
    assert message.endswith(
        "set hyperpod-dpd:instanceGroups.prefill.instanceType to ml.p5.48xlarge (or another of them)"
    )


def test_colocated_endpoints_may_use_other_types(dev):
    spec = iec_spec(dev)
    del spec["pdSpec"]
    spec["instanceType"] = "ml.g6e.48xlarge"
    assert findings("hyperpod-dpd-instance-type", dev) == []


def test_the_groups_of_a_colocated_stack_may_be_other_types(dev):
    # A colocated endpoint on g6e groups: nothing here runs DPD.
    spec = iec_spec(dev)
    del spec["pdSpec"]
    spec["instanceType"] = "ml.g6e.48xlarge"
    for role in ("prefill", "decode"):
        gpu_group(dev, role)["instanceType"] = "ml.g6e.48xlarge"
    assert findings("hyperpod-dpd-instance-type", dev) == []


def test_a_colocated_group_beside_a_dpd_endpoint_may_be_another_type(dev):
    group = gpu_group(dev, "decode")
    baseline = {**group, "instanceGroupName": "baseline", "instanceType": "ml.g6e.48xlarge"}
    baseline["kubernetesConfig"] = {"labels": {**group["kubernetesConfig"]["labels"]}}
    baseline["kubernetesConfig"]["labels"][ROLE_LABEL] = "colocated"
    named(dev, "hyperpod-cluster").props["instanceGroups"].append(baseline)
    assert findings("hyperpod-dpd-instance-type", dev) == []
