"""Preflight against botocore's Stubber: real request validation, recorded answers, no network."""

from __future__ import annotations

import json

import pytest
from botocore.stub import Stubber

from core.versions import EKS_ADDON_VERSIONS
from hyperpod_dpd.cli import main
from hyperpod_dpd.preflight.checks import FAIL, PASS, WARN, run_checks
from hyperpod_dpd.preflight.deployers import deployer_checks
from settings import parse_settings
from tests.conftest import edit, stack_raw
from tests.hyperpod_dpd.preflight.clients import clients as new_clients

PLAN_ARN = "arn:aws:sagemaker:us-east-2:111122223333:training-plan/p5-dev"
CAPACITY_ARN = "arn:aws:sagemaker:us-east-2:111122223333:reserved-capacity/rc-p5-dev-0001"


@pytest.fixture
def aws(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    services = ("ec2", "service-quotas", "sagemaker", "eks", "sts", "iam")
    clients = new_clients("us-east-2", services)
    stubs = {s: Stubber(c) for s, c in clients.items()}
    for stub in stubs.values():
        stub.activate()
    yield clients, stubs
    for stub in stubs.values():
        stub.assert_no_pending_responses()


def offerings(stubs, zones):
    stubs["ec2"].add_response(
        "describe_instance_type_offerings",
        {
            "InstanceTypeOfferings": [
                {
                    "InstanceType": "p5.48xlarge",
                    "LocationType": "availability-zone-id",
                    "Location": z,
                }
                for z in zones
            ]
        },
        {
            "LocationType": "availability-zone-id",
            "Filters": [{"Name": "instance-type", "Values": ["p5.48xlarge"]}],
        },
    )


def quotas(stubs, p5_value):
    stubs["service-quotas"].add_response(
        "list_service_quotas",
        {
            "Quotas": [
                {"QuotaName": "ml.p5.48xlarge for cluster usage", "Value": p5_value},
                {"QuotaName": "ml.m5.4xlarge for cluster usage", "Value": 4.0},
            ]
        },
        {"ServiceCode": "sagemaker"},
    )


def addons(stubs, missing=()):
    for addon, version in sorted(EKS_ADDON_VERSIONS["1.33"].items()):
        published = [] if addon in missing else [{"addonVersion": version}]
        stubs["eks"].add_response(
            "describe_addon_versions",
            {"addons": [{"addonName": addon, "addonVersions": published}]},
            {"kubernetesVersion": "1.33", "addonName": addon},
        )


ADMIN = "arn:aws:iam::111122223333:role/PlatformAdmin"  # Pulumi.dev.yaml deployerArns


def deployers(stubs, found=ADMIN, account="111122223333", name="PlatformAdmin"):
    """STS says whose credentials these are; IAM answers GetRole for the role `name` with
    `found` (its ARN as IAM has it), or NoSuchEntity when None."""
    stubs["sts"].add_response(
        "get_caller_identity",
        {"Account": account, "Arn": f"arn:aws:iam::{account}:user/me", "UserId": "AIDAME"},
        {},
    )
    if account != "111122223333":
        return
    if found is None:
        stubs["iam"].add_client_error(
            "get_role", "NoSuchEntity", expected_params={"RoleName": name}
        )
        return
    path = found.split(":role", 1)[1].rsplit("/", 1)[0] + "/"
    role = {"Path": path, "RoleName": name, "RoleId": "AROAADMIN0000000000", "Arn": found,
            "CreateDate": "2025-01-01T00:00:00Z"}  # fmt: skip
    stubs["iam"].add_response("get_role", {"Role": role}, {"RoleName": name})


def results(settings, clients):
    return {c.name: c for c in run_checks(settings, clients.__getitem__)}


def test_everything_in_place_passes(aws):
    clients, stubs = aws
    offerings(stubs, ["use2-az1", "use2-az2"])
    quotas(stubs, 2.0)
    addons(stubs)
    deployers(stubs)
    checks = results(parse_settings(stack_raw("dev")), clients)
    assert {c.result for c in checks.values()} == {PASS}
    assert checks["quota 'ml.p5.48xlarge for cluster usage'"].detail == "2 >= 2 needed"


def test_type_not_offered_in_the_gpu_az_names_where_it_is(aws):
    clients, stubs = aws
    offerings(stubs, ["use2-az1", "use2-az3"])
    quotas(stubs, 2.0)
    addons(stubs)
    deployers(stubs)
    check = results(parse_settings(stack_raw("dev")), clients)[
        "offering ml.p5.48xlarge in use2-az2"
    ]
    assert check.result == FAIL
    assert "offered in use2-az1, use2-az3" in check.detail
    assert "hyperpod-dpd:availabilityZoneId" in check.fix


def test_quota_too_low_fails_and_missing_quota_warns(aws):
    clients, stubs = aws
    offerings(stubs, ["use2-az2"])
    stubs["service-quotas"].add_response(
        "list_service_quotas",
        {"Quotas": [{"QuotaName": "ml.p5.48xlarge for cluster usage", "Value": 1.0}]},
        {"ServiceCode": "sagemaker"},
    )
    addons(stubs)
    deployers(stubs)
    checks = results(parse_settings(stack_raw("dev")), clients)
    assert checks["quota 'ml.p5.48xlarge for cluster usage'"].result == FAIL
    assert "1 < 2 needed" in checks["quota 'ml.p5.48xlarge for cluster usage'"].detail
    assert checks["quota 'ml.m5.4xlarge for cluster usage'"].result == WARN


def _plan(stubs, zone_id, status="Active", count=1):
    stubs["sagemaker"].add_response(
        "describe_training_plan",
        {
            "TrainingPlanArn": PLAN_ARN,
            "TrainingPlanName": "p5-dev",
            "Status": status,
            "ReservedCapacitySummaries": [
                {
                    "ReservedCapacityArn": CAPACITY_ARN,
                    "InstanceType": "ml.p5.48xlarge",
                    "TotalInstanceCount": count,
                    "Status": "Active",
                    "AvailabilityZoneId": zone_id,
                }
            ],
        },
        {"TrainingPlanName": "p5-dev"},
    )


@pytest.mark.parametrize(
    ("zone", "status", "expected"),
    [
        ("use2-az2", "Active", PASS),
        ("use2-az3", "Active", "reserves ml.p5.48xlarge in use2-az3, not use2-az2"),
        ("use2-az2", "Expired", "status Expired"),
    ],
)
def test_training_plan_must_cover_the_gpu_az(aws, zone, status, expected):
    clients, stubs = aws
    offerings(stubs, ["use2-az2"])
    quotas(stubs, 2.0)
    _plan(stubs, zone, status)
    addons(stubs)
    deployers(stubs)
    raw = edit(stack_raw("dev"), "hyperpod-dpd:instanceGroups.decode.trainingPlanArn", PLAN_ARN)
    check = results(parse_settings(raw), clients)["training plan p5-dev (decode)"]
    assert check.result == PASS if expected == PASS else expected in check.detail


def test_unpublished_addon_version_fails(aws):
    clients, stubs = aws
    offerings(stubs, ["use2-az2"])
    quotas(stubs, 2.0)
    addons(stubs, missing=("coredns",))
    deployers(stubs)
    check = results(parse_settings(stack_raw("dev")), clients)["add-on coredns v1.12.1-eksbuild.2"]
    assert check.result == FAIL and "EKS_ADDON_VERSIONS" in check.fix


def test_every_fail_says_how_to_fix_it(aws):
    clients, stubs = aws
    offerings(stubs, ["use2-az1"])
    quotas(stubs, 0.0)
    addons(stubs, missing=("coredns",))
    deployers(stubs)
    failed = [
        c for c in results(parse_settings(stack_raw("dev")), clients).values() if c.result == FAIL
    ]
    assert len(failed) >= 3 and all(c.fix for c in failed)


def test_access_denied_is_reported_not_raised(aws):
    clients, stubs = aws
    stubs["ec2"].add_client_error("describe_instance_type_offerings", "UnauthorizedOperation")
    quotas(stubs, 2.0)
    addons(stubs)
    deployers(stubs)
    checks = results(parse_settings(stack_raw("dev")), clients)
    assert checks["offerings"].result == FAIL
    assert "UnauthorizedOperation" in checks["offerings"].detail


def test_command_prints_table_and_exits_1_on_failure(aws, capsys, monkeypatch):
    clients, stubs = aws
    offerings(stubs, ["use2-az1"])
    quotas(stubs, 2.0)
    addons(stubs)
    deployers(stubs)
    import hyperpod_dpd.preflight.checks as preflight

    monkeypatch.setattr(preflight, "boto3_factory", lambda region: clients.__getitem__)
    assert main(["preflight", "--stack", "dev", "--format", "json"]) == 1
    rows = json.loads(capsys.readouterr().out)
    assert {"name": "offering ml.p5.48xlarge in use2-az2", "result": "FAIL"}.items() <= rows[
        0
    ].items()


def test_no_credentials_is_said_once_as_what_it_is():
    from botocore.exceptions import NoCredentialsError

    def client(name):
        raise NoCredentialsError()

    checks = run_checks(parse_settings(stack_raw("dev")), client)
    assert len(checks) == 1 and checks[0].result == FAIL
    assert "Unable to locate credentials" in checks[0].detail
    assert "aws sso login" in checks[0].fix and "need ec2:" not in checks[0].fix


SSO_NAME = "AWSReservedSSO_PlatformAdmin_0123456789abcdef"
SSO_ROLE = f"arn:aws:iam::111122223333:role/aws-reserved/sso.amazonaws.com/us-east-2/{SSO_NAME}"


def _deployers(raw, clients):
    return {c.name: c for c in deployer_checks(parse_settings(raw), clients.__getitem__)}


def test_an_identity_center_role_without_its_path_fails_with_the_arn_iam_has(aws):
    """aws:PrincipalArn carries the path: the bucket would let this admin in by no name."""
    clients, stubs = aws
    bare = f"arn:aws:iam::111122223333:role/{SSO_NAME}"
    raw = edit(stack_raw("dev"), "hyperpod-dpd:deployerArns", [bare])
    deployers(stubs, found=SSO_ROLE, name=SSO_NAME)
    check = _deployers(raw, clients)[f"deployer role {SSO_NAME}"]
    assert check.result == FAIL
    assert f"hyperpod-dpd:deployerArns[0] is {bare}, but IAM's role {SSO_NAME} is {SSO_ROLE}" in (
        check.detail
    )
    assert f"pulumi config set --path 'hyperpod-dpd:deployerArns[0]' {SSO_ROLE}" in check.fix


def test_a_deployer_iam_does_not_have_fails_with_how_to_find_its_arn(aws):
    clients, stubs = aws
    deployers(stubs, found=None)
    check = _deployers(stack_raw("dev"), clients)["deployer role PlatformAdmin"]
    assert check.result == FAIL and "has no role named PlatformAdmin" in check.detail
    assert "aws iam get-role --role-name PlatformAdmin --query Role.Arn" in check.fix
    assert "/aws-reserved/sso.amazonaws.com/" in check.fix


def test_the_deployer_iam_has_passes_and_one_of_another_account_is_not_looked_up(aws):
    clients, stubs = aws
    deployers(stubs)
    assert _deployers(stack_raw("dev"), clients)["deployer role PlatformAdmin"].result == PASS
    deployers(stubs, account="999988887777")  # no GetRole: IAM would answer for its own account
    check = _deployers(stack_raw("dev"), clients)["deployer role PlatformAdmin"]
    assert check.result == WARN and "in account 111122223333" in check.detail


def test_a_caller_who_may_not_read_roles_is_told_the_permission(aws):
    clients, stubs = aws
    offerings(stubs, ["use2-az2"])
    quotas(stubs, 2.0)
    addons(stubs)
    stubs["sts"].add_response(
        "get_caller_identity",
        {"Account": "111122223333", "Arn": "arn:aws:iam::111122223333:user/me", "UserId": "A"},
        {},
    )
    stubs["iam"].add_client_error("get_role", "AccessDenied")
    check = results(parse_settings(stack_raw("dev")), clients)["deployers"]
    assert check.result == FAIL and "iam:GetRole" in check.fix
