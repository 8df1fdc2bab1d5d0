"""`hyperpod-dpd verify --stack` fails when the live IEC loads another checkpoint copy than the
one the stack stages for the endpoint (its own `endpoints.<key>.checkpoint`, else the stack's):
another prefix (another revision) or the same prefix in another bucket. The message names both
copies, the revision each means, and the fix."""

from __future__ import annotations

import pytest

from hyperpod_dpd.verify.results import FAIL, PASS
from tests.conftest import NEW_REVISION, canary_revision_raw, edit, stack_raw, write_project
from tests.hyperpod_dpd.verify.fake_kube import NAME, NAMESPACE

OLD = "6f6073b423013f6a7d4d9f39144961bfbfbc386b"  # the canary stack's checkpoint revision
NEW = NEW_REVISION  # the candidate's own checkpoint (tests/conftest.py canary_revision_raw)
REPO = "meta-llama/Llama-3.3-70B-Instruct"
CHECK = "serves the staged copy"
# The recorded IEC: the recorded deployment, checked as the canary's candidate (--name).
TARGET = ("--stack", "canary", "--endpoint", "candidate", "--name", NAME)


@pytest.fixture
def project(tmp_path, monkeypatch):
    """The canary stack whose candidate stages and serves a new revision of the model; no
    `pulumi` on PATH (a test that wants one puts it there)."""
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    return write_project(tmp_path / "project", canary_revision_raw(), "canary")


def _location(fake, prefix: str | None = None, bucket: str | None = None) -> dict:
    source = fake.iecs[(NAMESPACE, NAME)]["spec"]["modelSourceConfig"]
    if prefix is not None:
        source["modelLocation"] = prefix
    if bucket is not None:
        source["s3Storage"]["bucketName"] = bucket
    return source


def _pulumi_says(tmp_path, monkeypatch, bucket: str) -> None:
    """A `pulumi` on PATH whose `stack output modelBucket` prints `bucket`."""
    shims = tmp_path / "bin"
    shims.mkdir(exist_ok=True)
    pulumi = shims / "pulumi"
    pulumi.write_text(f'#!/bin/sh\n[ "$3" = modelBucket ] && echo {bucket}\n')
    pulumi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{shims}:/usr/bin:/bin")


def test_an_endpoint_still_on_the_old_revision_fails_naming_both_copies(fake, verify, project):
    result = verify("--no-prompts", target=TARGET, project=project)
    assert result.code == 1
    check = result.check(CHECK)
    assert check["result"] == FAIL
    assert check["detail"] == (
        f"the IEC loads s3://models-bucket-3302d3c/models/{REPO}/{OLD} (hf://{REPO}@{OLD} for "
        f"baseline: another copy of this stack); the stack stages "
        f"s3://<model bucket>/models/{REPO}/{NEW} (hf://{REPO}@{NEW}) for it"
    )
    assert (
        "stack canary stages for it (hyperpod-dpd:endpoints.candidate.checkpoint)"
        in (check["cause"])
    )
    assert "edited by hand" in check["cause"]
    assert check["fix"].startswith("run `pulumi up --stack canary`")
    assert "put that revision in hyperpod-dpd:endpoints.candidate.checkpoint" in check["fix"]
    assert check["ref"] == "docs/troubleshooting.md#endpoint-serves-another-copy"
    # The text report prints it with the rest.
    text = verify("--no-prompts", fmt="text", target=TARGET, project=project).out
    assert "see:   docs/troubleshooting.md#endpoint-serves-another-copy" in text


def test_the_endpoint_on_its_own_copy_passes(fake, verify, project):
    _location(fake, f"models/{REPO}/{NEW}")
    result = verify("--no-prompts", target=TARGET, project=project)
    assert result.code == 0, result.out
    check = result.check(CHECK)
    assert check["result"] == PASS
    assert check["detail"].startswith(
        f"s3://models-bucket-3302d3c/models/{REPO}/{NEW}: hf://{REPO}@{NEW} (bucket not compared: "
        "no checkpoint.bucketName and no modelBucket output (no `pulumi` on PATH))"
    )
    # The order: right after what the IEC says of itself.
    assert list(result.results())[:3] == ["endpoint ready", "endpoint is DPD", CHECK]


def test_a_copy_no_endpoint_of_the_stack_stages_is_named_so(fake, verify, project):
    _location(fake, "models/someone/else/")
    check = verify("--no-prompts", target=TARGET, project=project).check(CHECK)
    assert check["result"] == FAIL
    assert check["detail"].startswith(
        "the IEC loads s3://models-bucket-3302d3c/models/someone/else (no copy this stack stages)"
    )


def test_the_bucket_from_the_stack_output_is_compared(fake, verify, project, tmp_path, monkeypatch):
    _location(fake, f"models/{REPO}/{NEW}", "models-bucket-3302d3c")
    _pulumi_says(tmp_path, monkeypatch, "models-bucket-3302d3c")
    ok = verify("--no-prompts", target=TARGET, project=project).check(CHECK)
    assert ok["result"] == PASS
    assert ok["detail"] == f"s3://models-bucket-3302d3c/models/{REPO}/{NEW}: hf://{REPO}@{NEW}"
    _location(fake, bucket="models-bucket-old")  # the right prefix of another bucket
    result = verify("--no-prompts", target=TARGET, project=project)
    assert result.code == 1
    assert result.check(CHECK)["detail"] == (
        f"the IEC loads s3://models-bucket-old/models/{REPO}/{NEW} (a copy in another bucket than "
        f"the stack's model bucket); the stack stages s3://models-bucket-3302d3c/models/{REPO}/"
        f"{NEW} (hf://{REPO}@{NEW}) for it"
    )


def test_checkpoint_bucket_name_is_compared_without_pulumi(fake, verify, tmp_path):
    raw = edit(stack_raw("dev"), "hyperpod-dpd:checkpoint.bucketName", "models-bucket-named")
    project = write_project(tmp_path / "named", raw, "dev")
    result = verify("--no-prompts", target=("--stack", "dev"), project=project)
    assert result.code == 1
    detail = result.check(CHECK)["detail"]
    assert detail.startswith("the IEC loads s3://models-bucket-3302d3c/models/")
    assert "the stack stages s3://models-bucket-named/models/" in detail
    _location(fake, bucket="models-bucket-named")
    assert verify("--no-prompts", target=("--stack", "dev"), project=project).code == 0


def test_without_a_stack_nothing_is_compared(fake, verify):
    """--name alone: the stack's copy is unknown, so there is no such check."""
    _location(fake, "models/someone/else")
    result = verify("--no-prompts")
    assert result.code == 0 and CHECK not in result.results()
