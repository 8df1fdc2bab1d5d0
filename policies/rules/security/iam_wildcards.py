"""hyperpod-dpd-iam-wildcards: no Allow of every action, and no S3 action on every resource."""

from __future__ import annotations

import json

from policies.rules import views
from policies.rules.base import Finding, Rule

POLICY_TYPES = (
    "aws:iam/rolePolicy:RolePolicy",
    "aws:iam/policy:Policy",
    "aws:s3/bucketPolicy:BucketPolicy",
)


def _listed(value) -> list:
    return value if isinstance(value, list) else [value]


def check(resources, limits):
    for r in resources:
        if r.type not in POLICY_TYPES:
            continue
        if views.unknown(r.props.get("policy")):
            yield views.unchecked(r.urn, f"the policy document of {r.name}")
            continue
        try:
            statements = _listed(json.loads(r.props.get("policy") or "{}").get("Statement", []))
        except (TypeError, ValueError):
            continue
        for s in statements:
            if s.get("Effect") != "Allow":
                continue
            actions = _listed(s.get("Action", []))
            resources_ = _listed(s.get("Resource", []))
            if any(a in ("*", "*:*") for a in actions):
                yield Finding(
                    r.urn, f'{r.name} allows every action ("Action": "*"); list the actions'
                )
            s3 = [a for a in actions if str(a).lower().startswith("s3:")]
            if s3 and any(res in ("*", "arn:aws:s3:::*") for res in resources_):
                yield Finding(
                    r.urn,
                    f"{r.name} allows {', '.join(s3)} on every S3 resource; scope it to bucket ARNs",
                )


RULE = Rule("hyperpod-dpd-iam-wildcards", "No wildcard IAM grants", "mandatory", check)
