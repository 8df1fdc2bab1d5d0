"""What AWS refuses at `pulumi up`, refused before anything exists: the limits and names of the
pinned botocore's models (core/aws/aws_facts.py), checked against the instance groups, the EKS
access settings and the Region."""

from __future__ import annotations

import difflib
import ipaddress
import re

from core.aws.aws_facts import (
    BOTOCORE_VERSION,
    HYPERPOD_INSTANCE_TYPES,
    MAX_INSTANCE_GROUPS,
    PARTITION_REGIONS,
    ROLE_NAME_MAX,
    ROLE_NAME_PATTERN,
)
from core.problems import ConfigProblem
from core.regions import partition_of
from core.sizing.catalog import INSTANCES
from core.vocabulary import GPU_ROLES
from settings.cluster.groups import EksConfig, InstanceGroups
from settings.config.errors import full_key, set_fix

# EKS: at most 40 CIDR blocks in publicAccessCidrs (EKS User Guide, "Cluster API server endpoint").
MAX_PUBLIC_ACCESS_CIDRS = 40


def check_aws_limits(groups: InstanceGroups, eks: EksConfig, region: str) -> list[ConfigProblem]:
    """Instance types HyperPod offers, the number of groups CreateCluster takes, one instance
    EKS's public CIDR limit, role ARNs of
    the Region's partition with names IAM accepts, training plans of the Region, a Region the
    partition has."""
    key = full_key(("instanceGroups",))
    problems = []
    for name, group in groups.items():
        if group.instance_type not in HYPERPOD_INSTANCE_TYPES:
            type_key = f"{key}.{name}.instanceType"
            # A GPU group's likely meaning first: the DPD types (core/sizing/catalog.py).
            gpu = (
                [i for i in INSTANCES if i in HYPERPOD_INSTANCE_TYPES]
                if group.role in GPU_ROLES
                else []
            )
            close = difflib.get_close_matches(group.instance_type, gpu, 1) or (
                difflib.get_close_matches(group.instance_type, HYPERPOD_INSTANCE_TYPES, 1)
            )
            problems.append(ConfigProblem(
                type_key, group.instance_type,
                f"an instance type HyperPod offers (sagemaker ClusterInstanceType, botocore "
                f"{BOTOCORE_VERSION})",
                (f"did you mean {close[0]}? " if close else "")
                + set_fix(type_key, close[0] if close else None),
            ))  # fmt: skip
        plan = group.training_plan_arn
        if plan is not None and plan.split(":")[3] != region:
            plan_key = f"{key}.{name}.trainingPlanArn"
            problems.append(ConfigProblem(
                plan_key, plan, f"a training plan of the stack's Region {region}",
                f"use the plan bought in {region}, or remove {plan_key}",
            ))  # fmt: skip
    if len(groups) > MAX_INSTANCE_GROUPS:
        problems.append(ConfigProblem(
            key, sorted(groups), f"at most {MAX_INSTANCE_GROUPS} groups (CreateCluster's limit)",
            "merge groups of one role and instance type (raise instanceCount instead)",
        ))  # fmt: skip
    cidrs = eks.public_access_cidrs
    if len(cidrs) > MAX_PUBLIC_ACCESS_CIDRS:
        problems.append(ConfigProblem(
            full_key(("eks", "publicAccessCidrs")), f"{len(cidrs)} CIDRs",
            f"at most {MAX_PUBLIC_ACCESS_CIDRS} (an EKS limit)", _merged_cidrs_fix(cidrs),
        ))  # fmt: skip
    problems += _check_role_arns(eks, region)
    partition = partition_of(region)
    if region not in PARTITION_REGIONS.get(partition, ()):
        problems.append(ConfigProblem(
            "aws:region", region, f"a Region of partition {partition} (botocore "
            f"{BOTOCORE_VERSION})", "check the spelling: pulumi config set aws:region us-east-2",
        ))  # fmt: skip
    return problems


def _merged_cidrs_fix(cidrs: list[str]) -> str:
    """Neighbouring ranges merged (the same addresses, fewer CIDRs) when that is few enough."""
    key = full_key(("eks", "publicAccessCidrs"))
    merged = [str(n) for n in ipaddress.collapse_addresses(ipaddress.ip_network(c) for c in cidrs)]
    if len(merged) <= MAX_PUBLIC_ACCESS_CIDRS:
        return f"merge neighbouring ranges (the same addresses): {set_fix(key, merged)}"
    return "merge neighbouring ranges into wider CIDRs (they do not merge into 40 as they are)"


def _check_role_arns(eks: EksConfig, region: str) -> list[ConfigProblem]:
    return [
        problem
        for field, arns in (
            ("adminRoleArns", eks.admin_role_arns),
            ("viewRoleArns", eks.view_role_arns),
        )
        for problem in check_iam_arns(full_key(("eks", field)), arns, region)
    ]


def check_iam_arns(key: str, arns: list[str], region: str) -> list[ConfigProblem]:
    """IAM role (or user) ARNs of the Region's partition, each with a name IAM accepts."""
    partition, problems = partition_of(region), []
    for arn in arns:
        name = arn.rsplit("/", 1)[-1]
        kind = arn.split(":")[-1].split("/", 1)[0]  # role | user
        if arn.split(":")[1] != partition:
            problems.append(ConfigProblem(
                key, arn, f"{kind}s of partition {partition} (the Region {region}'s)",
                f"use arn:{partition}:iam::<account>:{kind}/<name>",
            ))  # fmt: skip
        elif len(name) > ROLE_NAME_MAX or not re.fullmatch(ROLE_NAME_PATTERN[1:-1], name):
            problems.append(ConfigProblem(
                key, arn,
                f"a {kind} name IAM accepts: 1 to {ROLE_NAME_MAX} of letters, digits and "
                "+=,.@_- (no spaces, no wildcards)",
                f"copy the {kind}'s ARN from the IAM console",
            ))  # fmt: skip
    return problems
