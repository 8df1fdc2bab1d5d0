"""Checkpoint checks: hf:// sources pinned to a commit, sources of a known form, a default prefix
the IAM policies can be scoped to."""

from __future__ import annotations

import pytest

from settings import parse_settings
from tests.conftest import edit
from tests.settings.problems import followed, only_problem

NS = "hyperpod-dpd"


@pytest.mark.parametrize("revision", [None, "main", "6f6073b4"])
def test_hf_source_needs_a_commit_sha(dev_raw, revision):
    edit(dev_raw, f"{NS}:checkpoint.revision", revision)
    message = only_problem(dev_raw)
    assert message.startswith("hyperpod-dpd:checkpoint.revision: ")
    assert "a 40-hex commit SHA for hf:// sources" in message


@pytest.mark.parametrize("source", ["hf://meta-llama", "s3://Bad_Bucket/x", "gs://bucket/model"])
def test_malformed_sources(dev_raw, source):
    edit(dev_raw, f"{NS}:checkpoint.source", source)
    assert only_problem(dev_raw).startswith(f"hyperpod-dpd:checkpoint.source: got '{source}'")


@pytest.mark.parametrize(
    ("source", "staging", "prefix"),
    [
        ("s3://my-models/Llama 3.3 (70B)*", "job", "models/Llama-3.3-70B"),
        ("/data/checkpoints/llama?", "manual", "models/llama"),
    ],
)
def test_a_source_whose_name_would_widen_the_iam_policies_needs_a_prefix(
    dev_raw, source, staging, prefix
):
    # The default prefix, models/<the source's last name>, scopes the roles' IAM policies
    # (arn:aws:s3:::<bucket>/<prefix>/*), where * and ? are wildcards: it takes the rules of
    # an explicit prefix, and the fix sets one.
    edit(dev_raw, f"{NS}:checkpoint.source", source)
    edit(dev_raw, f"{NS}:checkpoint.staging", staging)
    edit(dev_raw, f"{NS}:checkpoint.revision")
    message = only_problem(dev_raw)
    assert message.startswith(f"hyperpod-dpd:checkpoint.source: got '{source}'")
    assert "IAM policy wildcards" in message
    fixed = parse_settings(followed(dev_raw, message))
    assert fixed.checkpoint.effective_prefix == prefix


def test_a_source_with_a_plain_name_keeps_its_default_prefix(dev_raw):
    edit(dev_raw, f"{NS}:checkpoint.source", "s3://my-models/llama-3.3_70b")
    edit(dev_raw, f"{NS}:checkpoint.revision")
    assert parse_settings(dev_raw).checkpoint.effective_prefix == "models/llama-3.3_70b"
