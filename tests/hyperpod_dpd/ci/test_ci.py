"""`hyperpod-dpd ci` (hyperpod_dpd/ci/): what a workflow job needs of a stack, from its stack
file, and the targeted first deploy that brings a CodeBuild runner up."""

from __future__ import annotations

import json

import pytest

from core.problems import ConfigError
from hyperpod_dpd.ci.bootstrap import bootstrap_command, bootstrap_targets
from hyperpod_dpd.ci.command import job_facts
from hyperpod_dpd.cli import main
from settings import parse_settings
from tests.conftest import ROOT, edit, run_stack, stack_raw

NS = "hyperpod-dpd"


def settings(raw):
    return parse_settings(raw)


def test_a_deploy_job_of_prod_runs_on_its_codebuild_runner_with_its_deploy_role():
    facts = job_facts(settings(stack_raw("prod")), "prod", "deploy", "4242", "2")
    assert facts == {
        # CodeBuild's label: codebuild-<project>-${{ github.run_id }}-${{ github.run_attempt }}
        "runs-on": "codebuild-hyperpod-dpd-prod-runner-4242-2",
        "region": "us-west-2",
        "role-arn": "arn:aws:iam::444455556666:role/hyperpod-dpd-prod-deploy",
        "pulumi-organization": "my-org",
    }


def test_a_self_hosted_runner_is_its_labels():
    raw = edit(stack_raw("prod"), f"{NS}:ci", {"runner": "self-hosted", "labels": ["gpu-vpc"],
               "deployRoleArn": "arn:aws:iam::111122223333:role/d", "pulumiOrganization": "o"})  # fmt: skip
    assert job_facts(settings(raw), "prod", "deploy", "", "")["runs-on"] == [
        "self-hosted",
        "gpu-vpc",
    ]


def test_a_private_api_is_never_deployed_from_a_github_hosted_runner():
    raw = edit(stack_raw("prod"), f"{NS}:ci", {"deployRoleArn": "arn:aws:iam::1:role/d"})
    raw[f"{NS}:ci"] = {
        "deployRoleArn": "arn:aws:iam::111122223333:role/d",
        "pulumiOrganization": "o",
    }
    with pytest.raises(ConfigError) as err:
        job_facts(settings(raw), "prod", "deploy", "1", "1")
    (problem,) = err.value.problems
    assert problem.key == f"{NS}:ci.runner" and problem.value == "github-hosted"
    assert "the EKS API is private" in problem.allowed
    # A stack whose API is public to listed CIDRs may take GitHub's runners.
    edit(raw, f"{NS}:eks.publicAccessCidrs", ["203.0.113.0/24"])
    assert job_facts(settings(raw), "prod", "deploy", "1", "1")["runs-on"] == "ubuntu-latest"


def test_prod_is_never_previewed_and_a_job_without_its_role_names_the_key():
    with pytest.raises(ConfigError) as err:
        job_facts(settings(stack_raw("prod")), "prod", "preview", "1", "1")
    assert [p.key for p in err.value.problems] == [f"{NS}:ci.pullRequestPreview"]
    raw = edit(stack_raw("dev"), f"{NS}:ci.deployRoleArn")
    edit(raw, f"{NS}:ci.pulumiOrganization")
    with pytest.raises(ConfigError) as err:
        job_facts(settings(raw), "dev", "deploy", "1", "1")
    assert [p.key for p in err.value.problems] == [
        f"{NS}:ci.deployRoleArn",
        f"{NS}:ci.pulumiOrganization",
    ]
    assert job_facts(settings(stack_raw("dev")), "dev", "preview", "1", "1")["role-arn"] == (
        "arn:aws:iam::111122223333:role/hyperpod-dpd-dev-preview"
    )


def test_the_command_prints_github_output_lines(capsys, monkeypatch):
    monkeypatch.setenv("GITHUB_RUN_ID", "77")
    monkeypatch.setenv("GITHUB_RUN_ATTEMPT", "1")
    assert main(["ci", "--stack", "prod", "--project-dir", str(ROOT)]) == 0
    lines = dict(line.split("=", 1) for line in capsys.readouterr().out.splitlines())
    assert json.loads(lines["runs-on"]) == "codebuild-hyperpod-dpd-prod-runner-77-1"
    assert lines["role-arn"] == "arn:aws:iam::444455556666:role/hyperpod-dpd-prod-deploy"


def test_a_codebuild_runner_outside_a_workflow_run_names_the_flag(capsys, monkeypatch):
    monkeypatch.delenv("GITHUB_RUN_ID", raising=False)
    monkeypatch.delenv("GITHUB_RUN_ATTEMPT", raising=False)
    assert main(["ci", "--stack", "prod", "--project-dir", str(ROOT)]) == 2
    assert "--run-id: not set" in capsys.readouterr().err


@pytest.fixture(scope="module")
def prod_run():
    return run_stack(stack_raw("prod"), stack="prod")


def test_the_first_phase_brings_the_runner_its_way_out_and_the_api_it_reaches(prod_run):
    targets = bootstrap_targets(prod_run.resources)
    names = {u.rsplit("::", 1)[-1] for u in targets}
    # The runner whole, the NAT it leaves through (each AZ's: prod has one per AZ), the EKS
    # control plane it reaches; their parent components.
    assert {"ci-runner", "ci-runner-project", "ci-runner-webhook", "ci-runner-to-eks-api"} <= names
    assert {n for n in names if n.startswith("network-nat-")} == {
        f"network-nat-{x}{az}" for x in ("", "eip-") for az in ("usw2-az1", "usw2-az2", "usw2-az3")
    }
    assert {"eks-cluster", "eks", "network"} <= names
    # Every dependency of a target is a target: the targeted update has all it needs.
    by_urn = {r.urn: r for r in prod_run.resources}
    for urn in targets:
        assert set(by_urn[urn].depends_on) <= set(targets), urn
    # AWS only: nothing of the Kubernetes API, which answers inside the VPC once the runner is.
    assert not [u for u in targets if "$kubernetes:" in u or "::kubernetes:" in u]
    # Nothing GPU: the first phase does not start the HyperPod cluster.
    assert not [u for u in targets if "HyperPod" in u or "sagemaker" in u.lower()]


def test_the_first_phase_command_reads_back_as_its_targets_in_a_shell(prod_run):
    import shlex

    targets = bootstrap_targets(prod_run.resources)
    # A shell joins the continued lines, then splits: `$` in a URN stays literal.
    words = shlex.split(bootstrap_command("prod", targets).replace("\\\n", ""))
    assert words[:6] == ["pulumi", "up", "--stack", "prod", "--policy-pack", "build/policy-pack"]
    assert words[6::2] == ["--target"] * len(targets) and words[7::2] == targets


def test_a_protected_stack_in_an_account_another_stack_deploys_to_is_refused():
    """Every deploy role administers its account; dev deploys on merge and the canary rolls out
    without prod's reviewer: prod in their account would be theirs."""
    from hyperpod_dpd.ci.command import shared_account_problems

    prod = settings(stack_raw("prod"))
    others = {s: settings(stack_raw(s)) for s in ("dev", "canary")}
    assert shared_account_problems("prod", prod, others) == []  # the shipped prod: its own
    raw = edit(stack_raw("prod"), f"{NS}:ci.deployRoleArn",
               "arn:aws:iam::111122223333:role/hyperpod-dpd-prod-deploy")  # fmt: skip
    (problem,) = shared_account_problems("prod", settings(raw), others)
    assert problem.key == f"{NS}:ci.deployRoleArn"
    assert "canary, dev deploy to 111122223333 too" in problem.allowed
    # An unprotected stack (dev beside canary) may share.
    assert shared_account_problems("dev", others["dev"], {"canary": others["canary"]}) == []
