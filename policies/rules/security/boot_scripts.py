"""hyperpod-dpd-boot-scripts: the bucket HyperPod runs the nodes' lifecycle scripts from lets no
one but named principals change them.

HyperPod runs the OnCreate script as root on every node it creates or recovers, from an S3 path
that must start with s3://sagemaker- (SageMaker API, ClusterLifeCycleConfig,
https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ClusterLifeCycleConfig.html), a
name AWS-managed SageMaker policies grant s3:PutObject on (AmazonSageMakerFeatureStoreAccess:
arn:aws:s3:::*sagemaker*). So the bucket's policy must deny object writes and deletes to every
principal but those it names by aws:PrincipalArn (specs/buckets.py only_writers).

Such a Deny protects only if its exemption names principals: its condition's every operator is
one of IAM's negated ARN or string operators, plain (an `...IfExists` operator is true where the
key is absent, and the set operators `ForAllValues:`/`ForAnyValue:` judge sets, not the one ARN
of a request: IAM User Guide, "IAM JSON policy elements: Condition operators",
https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition_operators.html),
on aws:PrincipalArn alone, and each value one IAM role or user ARN (core/aws/principals.py): a
pattern such as `arn:aws:iam::*:*` under ArnNotLike exempts every principal.
"""

from __future__ import annotations

import fnmatch
import json

from core.aws.principals import is_principal_arn
from core.refs import is_ref
from core.vocabulary import HYPERPOD_CLUSTER_TYPE
from policies.rules import views
from policies.rules.base import Finding, Rule

POLICY = "aws:s3/bucketPolicy:BucketPolicy"
# What replacing or removing a script takes (a copy is a PutObject too).
MUST_DENY = ("s3:PutObject", "s3:DeleteObject", "s3:DeleteObjectVersion")
# A Deny conditioned only on who asks: the principal's ARN (negated: everyone else).
WHO = "aws:principalarn"
# The operators that exempt exactly the principals they list (IAM's names are case-sensitive).
NEGATED = ("ArnNotEquals", "ArnNotLike", "StringNotEquals", "StringNotLike")


def _listed(value) -> list:
    return value if isinstance(value, list) else [value]


def _denies_all_but_named(statement: dict) -> bool:
    if statement.get("Effect") != "Deny" or statement.get("Principal") not in ("*", {"AWS": "*"}):
        return False
    actions = [str(a).lower() for a in _listed(statement.get("Action", []))]
    if not all(any(fnmatch.fnmatchcase(m.lower(), a) for a in actions) for m in MUST_DENY):
        return False
    if not any(str(r).endswith("/*") for r in _listed(statement.get("Resource", []))):
        return False  # the objects, not only the bucket
    condition = statement.get("Condition") or {}
    return bool(condition) and all(
        _exempts_named(operator, keys) for operator, keys in condition.items()
    )


def _exempts_named(operator: str, keys) -> bool:
    """`operator: {aws:PrincipalArn: values}` spares only the roles or users `values` name."""
    if operator not in NEGATED or not isinstance(keys, dict):
        return False
    if {str(k).lower() for k in keys} != {WHO}:
        return False
    values = [v for value in keys.values() for v in _listed(value)]
    # A whole placeholder: the gate judges the spec before the program has asked AWS who
    # deploys (the session's issuer, program/stack_config.py); the pack sees the ARN itself.
    return bool(values) and all(is_principal_arn(v) or is_ref(v) for v in values)


def _guarded(policy_text) -> bool:
    try:
        statements = _listed(json.loads(policy_text).get("Statement", []))
    except (TypeError, ValueError, AttributeError):
        return False
    return any(isinstance(s, dict) and _denies_all_but_named(s) for s in statements)


def check(resources, limits):
    policies = {r.props.get("bucket"): r for r in views.of_type(resources, POLICY)}
    for cluster in views.of_type(resources, HYPERPOD_CLUSTER_TYPE):
        buckets = set()
        for group in cluster.props.get("instanceGroups") or []:
            uri = (group.get("lifeCycleConfig") or {}).get("sourceS3Uri")
            if not views.known(uri) or not isinstance(uri, str):
                yield views.unchecked(cluster.urn, "the lifecycle scripts' S3 path")
                continue
            buckets.add(uri.removeprefix("s3://").split("/", 1)[0])
        for bucket in sorted(buckets):
            policy = policies.get(bucket)
            text = policy.props.get("policy") if policy is not None else None
            if policy is not None and views.unknown(text):
                yield views.unchecked(cluster.urn, f"the bucket policy of {bucket}")
            elif not _guarded(text):
                yield Finding(
                    cluster.urn,
                    f"the lifecycle scripts' bucket {bucket} lets any principal allowed "
                    "s3:PutObject on it (AWS-managed SageMaker policies allow it on "
                    "*sagemaker* buckets) replace the scripts every new node runs as root: its "
                    "policy must deny object writes and deletes to all but the deployers "
                    "named by role or user ARN, no pattern nor IfExists (aws:PrincipalArn; "
                    "hyperpod-dpd:deployerArns)",
                )


RULE = Rule(
    "hyperpod-dpd-boot-scripts",
    "Only the deployers change the nodes' boot scripts",
    "mandatory",
    check,
)
