"""hyperpod-dpd-operator-version (policies/rules/cluster/operator_version.py): an inference operator
older than 3.2, and an endpoint that does not say which version it targets."""

from __future__ import annotations

from tests.policies.conftest import named
from tests.policies.rules.helpers import IEC_URN, findings


def test_operator_below_3_2(dev):
    named(dev, "endpoint-iec").props["metadata"]["annotations"]["hyperpod-dpd/operator-version"] = (
        "3.1"
    )
    assert findings("hyperpod-dpd-operator-version", dev) == [
        (
            IEC_URN,
            "inference operator 3.1 does not support pdSpec (needs 3.2 or newer); set "
            "hyperpod-dpd:inferenceOperator.version to 3.3 (add-on v1.4.0-eksbuild.1) or "
            "hyperpod-dpd:endpoint.mode to colocated",
        )
    ]


def test_operator_version_unknown(dev):
    del named(dev, "endpoint-iec").props["metadata"]["annotations"]["hyperpod-dpd/operator-version"]
    ((_, message),) = findings("hyperpod-dpd-operator-version", dev)
    assert message.startswith("the endpoint does not say which inference operator version")
