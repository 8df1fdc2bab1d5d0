"""The vendored original: the pinned upstream file, byte for byte, and nothing else."""

from __future__ import annotations

import hashlib
import re

import pytest

from core.versions import ALB_CONTROLLER_POLICY as PIN
from specs.alb_controller import upstream


def test_the_vendored_file_is_the_pinned_upstream_file():
    data = upstream.VENDORED.read_bytes()
    # core/versions.py: 8955 bytes at commit 73980cf (tag v2.13.0), this sha256.
    assert (len(data), hashlib.sha256(data).hexdigest()) == (8955, PIN.sha256)
    assert upstream.upstream_policy()["Version"] == "2012-10-17"


def test_the_pin_is_a_commit_and_a_hash():
    assert re.fullmatch(r"[0-9a-f]{40}", PIN.ref) and PIN.tag == "v2.13.0"
    assert re.fullmatch(r"[0-9a-f]{64}", PIN.sha256 or "")
    assert PIN.path == "docs/install/iam_policy.json"


def test_an_edited_copy_is_refused_naming_the_pin(tmp_path, monkeypatch):
    edited = tmp_path / "iam_policy.json"
    edited.write_bytes(upstream.VENDORED.read_bytes().replace(b'"Effect"', b'"effect"', 1))
    monkeypatch.setattr(upstream, "VENDORED", edited)
    upstream.upstream_policy.cache_clear()
    try:
        with pytest.raises(upstream.VendoredFileChanged, match=PIN.sha256 or "") as refused:
            upstream.upstream_policy()
        assert PIN.ref in str(refused.value) and "git checkout" in str(refused.value)
    finally:
        upstream.upstream_policy.cache_clear()
