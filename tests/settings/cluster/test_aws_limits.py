"""What AWS would refuse at `pulumi up`, refused before anything exists (settings/cluster/aws_limits.py
check_aws_limits, from the pinned botocore's models in core/aws/aws_facts.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT, edit
from tests.settings.problems import only_problem, problems_of

NS = "hyperpod-dpd"


def test_the_aws_facts_are_the_pinned_botocores():
    """core/aws/aws_facts.py is what scripts/extract_aws_facts.py reads from the botocore installed
    (requirements.txt): a pin bump without regenerating it fails here."""
    check = subprocess.run(
        [sys.executable, "scripts/extract_aws_facts.py", "--check"], cwd=ROOT, check=False
    )
    assert check.returncode == 0


def test_an_instance_type_hyperpod_does_not_offer(dev_raw):
    edit(dev_raw, f"{NS}:instanceGroups.decode.instanceType", "ml.p5.96xlarge")
    edit(dev_raw, f"{NS}:instanceGroups.prefill.instanceType", "ml.p5.96xlarge")
    problems = problems_of(dev_raw)
    assert any(
        p.startswith("hyperpod-dpd:instanceGroups.decode.instanceType: got 'ml.p5.96xlarge'")
        and "did you mean ml.p5.48xlarge?" in p
        for p in problems
    ), problems


def test_one_role_on_groups_of_two_instance_types(dev_raw):
    edit(dev_raw, f"{NS}:instanceGroups.decode2", {"instanceType": "ml.p5e.48xlarge",
         "instanceCount": 1, "role": "decode"})  # fmt: skip
    message = only_problem(dev_raw)
    assert message.startswith('hyperpod-dpd:instanceGroups: got {"decode": "ml.p5.48xlarge"')
    assert "one instance type over the decode groups llama-3-3-70b's decode pool" in message


def test_more_public_cidrs_than_eks_takes(dev_raw):
    edit(dev_raw, f"{NS}:eks.publicAccessCidrs", [f"203.0.{i}.0/24" for i in range(41)])
    assert only_problem(dev_raw).startswith(
        "hyperpod-dpd:eks.publicAccessCidrs: got '41 CIDRs'; allowed: at most 40"
    )


@pytest.mark.parametrize(
    ("arn", "names"),
    [
        ("arn:aws-cn:iam::111122223333:role/Admin", "roles of partition aws"),
        ("arn:aws:iam::111122223333:role/" + "a" * 65, "a role name IAM accepts"),
        ("arn:aws:iam::111122223333:role/Platform Admin", "a role name IAM accepts"),
        ("arn:aws:iam::111122223333:role/Admin*", "a role name IAM accepts"),
    ],
)
def test_role_arns_iam_would_refuse(dev_raw, arn, names):
    edit(dev_raw, f"{NS}:eks.adminRoleArns", [arn])
    message = only_problem(dev_raw)
    assert message.startswith("hyperpod-dpd:eks.adminRoleArns: got") and names in message


def test_a_training_plan_of_another_region(dev_raw):
    plan = "arn:aws:sagemaker:us-west-2:111122223333:training-plan/p5"
    edit(dev_raw, f"{NS}:instanceGroups.decode.trainingPlanArn", plan)
    assert "a training plan of the stack's Region us-east-2" in only_problem(dev_raw)


def test_a_region_the_partition_does_not_have(dev_raw):
    dev_raw["aws:region"] = "us-east-9"
    edit(dev_raw, f"{NS}:availabilityZoneId", "use9-az2")
    edit(dev_raw, f"{NS}:network.controlPlaneAzIds", ["use9-az1", "use9-az2"])
    assert any(p.startswith("aws:region: got 'us-east-9'") for p in problems_of(dev_raw))


@pytest.mark.parametrize(
    ("key", "value"),
    [("cost.hourlyPrices", {"ml.p5.48xlarge": float("inf")}),
     ("endpoint.gpuMemoryUtilization", float("nan"))],
)  # fmt: skip
def test_non_finite_numbers_are_refused(dev_raw, key, value):
    dev_raw.setdefault(f"{NS}:cost", {})
    edit(dev_raw, f"{NS}:{key}", value)
    assert any(key.split(".")[0] in p for p in problems_of(dev_raw))


@pytest.mark.parametrize(
    "source",
    ["s3://xn--models/llama", "s3://models-bucket/a//b", "s3://models-bucket/a/../b"],
)
def test_s3_sources_s3_would_refuse(dev_raw, source):
    edit(dev_raw, f"{NS}:checkpoint.source", source)
    edit(dev_raw, f"{NS}:checkpoint.revision")
    edit(dev_raw, f"{NS}:endpoint.model", "llama-3.3-70b")
    assert any(
        p.startswith(f"hyperpod-dpd:checkpoint.source: got '{source}'")
        for p in problems_of(dev_raw)
    )
