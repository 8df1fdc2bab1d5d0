"""Checkpoint checks: hf:// sources pinned to a commit, sources of a known form."""

from __future__ import annotations

import pytest

from tests.conftest import edit
from tests.settings.problems import only_problem

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
