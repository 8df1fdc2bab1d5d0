"""IAM permission documents as plain data: every statement names its resources by ARN.

Documents are JSON text with `${name.attr}` placeholders for ARNs not known yet, so the
wildcard rule judges them before any role exists; components resolve the placeholders
(program/outputs.py) and the engine receives the same text with the ARNs in place.
"""

from __future__ import annotations

import json
from typing import Any

from core.vocabulary import ROLE_POLICY_TYPE
from specs.base import Desired

Statement = dict[str, Any]


def allow(actions: list[str], resources: list[str], sid: str | None = None) -> Statement:
    statement: Statement = {"Effect": "Allow", "Action": actions, "Resource": resources}
    if sid:
        statement["Sid"] = sid
    return statement


def service_statement(*services: str) -> Statement:
    """Lets AWS services (e.g. sagemaker.amazonaws.com) assume a role."""
    return {"Effect": "Allow", "Principal": {"Service": list(services)}, "Action": "sts:AssumeRole"}


def source_scoped(
    statement: Statement,
    source_account: Any,
    source_arn: Any = None,
) -> Statement:
    """`statement` with the aws:SourceAccount / aws:SourceArn conditions a service sets when it
    assumes a role on behalf of one of its resources."""
    condition: dict = {}
    if source_account is not None:
        condition["StringEquals"] = {"aws:SourceAccount": source_account}
    if source_arn is not None:
        condition["ArnLike"] = {"aws:SourceArn": source_arn}
    return {**statement, "Condition": condition} if condition else statement


def document_text(*statements: Statement) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def managed_policy(partition: str, name: str) -> str:
    return f"arn:{partition}:iam::aws:policy/{name}"


def prefix_read(bucket_arn: str, prefixes: tuple[str, ...]) -> list[Statement]:
    """List and read the key prefixes of a bucket (the staged copies of the models' weights,
    one per checkpoint the endpoints load), nothing else."""
    stripped = [p.strip("/") for p in prefixes]
    return [
        {
            **allow(["s3:ListBucket"], [bucket_arn], "ListModelPrefix"),
            "Condition": {
                "StringLike": {"s3:prefix": [k for p in stripped for k in (p, f"{p}/*")]}
            },
        },
        allow(["s3:GetObject"], [f"{bucket_arn}/{p}/*" for p in stripped], "ReadModelPrefix"),
    ]


def role_policy(name: str, parents: tuple[str, ...], role: str, *statements: Statement) -> Desired:
    """An inline policy of the role whose name (or id) the placeholder `role` stands for."""
    return Desired(
        ROLE_POLICY_TYPE, name, parents, {"role": role, "policy": document_text(*statements)}
    )
