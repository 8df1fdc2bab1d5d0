"""The CI settings (settings/ci.py): each runner with the keys it needs and none it ignores,
the preview role only with the preview, the deploy role given one cluster entry."""

from __future__ import annotations

import pytest

from settings import parse_settings
from tests.conftest import edit, stack_raw
from tests.settings.problems import followed, only_problem

NS = "hyperpod-dpd"
ROLE = "arn:aws:iam::111122223333:role/hyperpod-dpd-dev-deploy"


@pytest.mark.parametrize(
    ("missing", "runner"),
    [("repository", "codebuild"), ("connectionArn", "codebuild"), ("labels", "self-hosted")],
)
def test_a_runner_without_what_it_needs_names_the_key(missing, runner):
    raw = edit(stack_raw("dev"), f"{NS}:ci.runner", runner)
    if runner == "codebuild":
        edit(raw, f"{NS}:ci.{missing}")
    else:
        for key in ("repository", "connectionArn"):
            edit(raw, f"{NS}:ci.{key}")
    message = only_problem(raw)
    assert message.startswith(f"{NS}:ci.{missing}: ")
    assert f"set while {NS}:ci.runner is {runner}" in message


def test_a_codebuild_key_without_the_codebuild_runner_is_refused_and_the_fix_works():
    raw = edit(stack_raw("dev"), f"{NS}:ci.runner", "self-hosted")
    edit(raw, f"{NS}:ci.labels", ["gpu-vpc"])
    problems = [p for p in _problems(raw)]
    assert [p.split(":")[1].split(" ")[0] for p in problems] == [
        "ci.repository",
        "ci.connectionArn",
    ]
    assert f"only with {NS}:ci.runner codebuild (it is self-hosted)" in problems[0]


def _problems(raw):
    from core.problems import ConfigError

    with pytest.raises(ConfigError) as err:
        parse_settings(raw)
    return [p.render() for p in err.value.problems]


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("repository", "not a repo"),
        ("connectionArn", "arn:aws:codestar:us-east-2:111122223333:connection/x"),
        ("deployRoleArn", "arn:aws:iam::111122223333:user/deployer"),
        ("labels", ["has space"]),
        ("computeType", "BUILD_GENERAL1_2XLARGE"),
    ],
)
def test_values_outside_their_forms_name_the_key(key, value):
    message = only_problem(edit(stack_raw("dev"), f"{NS}:ci.{key}", value))
    assert message.startswith(f"{NS}:ci.{key}")


def test_the_preview_needs_its_role_and_the_role_needs_the_preview():
    raw = edit(stack_raw("dev"), f"{NS}:ci.previewRoleArn")
    message = only_problem(raw)
    assert message.startswith(f"{NS}:ci.previewRoleArn: not set; allowed: the read-only role")
    raw = edit(stack_raw("dev"), f"{NS}:ci.pullRequestPreview", False)
    message = only_problem(raw)
    assert message.startswith(f"{NS}:ci.previewRoleArn: got ")
    parse_settings(followed(raw, message))  # turning the preview on, as the fix says


def test_the_preview_role_is_no_cluster_admin():
    preview = stack_raw("dev")[f"{NS}:ci"]["previewRoleArn"]
    raw = edit(stack_raw("dev"), f"{NS}:eks.adminRoleArns", [preview])
    assert only_problem(raw).startswith(f"{NS}:ci.previewRoleArn: got ")


def test_the_deploy_role_listed_as_admin_needs_deployer_admin_off_and_the_fix_works():
    raw = edit(stack_raw("dev"), f"{NS}:eks.adminRoleArns", [ROLE])
    message = only_problem(raw)
    assert message.startswith(f"{NS}:eks.deployerAdmin: got true; allowed: false while")
    parse_settings(followed(raw, message))


def test_the_preview_role_reads_the_cluster_once_even_when_listed_as_a_viewer():
    s = parse_settings(stack_raw("dev"))
    preview = s.ci.preview_role_arn
    assert s.view_role_arns() == [preview]
    raw = edit(stack_raw("dev"), f"{NS}:eks.viewRoleArns", [preview])
    assert parse_settings(raw).view_role_arns() == [preview]
