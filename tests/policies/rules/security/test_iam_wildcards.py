"""hyperpod-dpd-iam-wildcards (policies/rules/security/iam_wildcards.py): a policy allowing every
action, and an S3 action on every resource."""

from __future__ import annotations

import json

from tests.policies.conftest import named
from tests.policies.rules.helpers import findings


def test_iam_wildcards(dev):
    policy = named(dev, "hyperpod-execution-s3")
    policy.props["policy"] = json.dumps(
        {"Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"},
                       {"Effect": "Allow", "Action": ["s3:GetObject"], "Resource": "*"}]}
    )  # fmt: skip
    assert [m for _, m in findings("hyperpod-dpd-iam-wildcards", dev)] == [
        'hyperpod-execution-s3 allows every action ("Action": "*"); list the actions',
        "hyperpod-execution-s3 allows s3:GetObject on every S3 resource; scope it to bucket ARNs",
    ]
