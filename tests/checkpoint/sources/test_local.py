"""A local directory as the source: what its listing leaves out, and the filters."""

from __future__ import annotations

from checkpoint.sources.base import SourceFile, select_files
from checkpoint.sources.local import LocalSource


def test_local_listing_leaves_out_git_and_hub_metadata_and_filters(tmp_path):
    for rel in ["config.json", "w/model.safetensors", ".git/HEAD", ".cache/huggingface/x.lock"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(rel)
    (tmp_path / "link.json").symlink_to(tmp_path / "config.json")
    files = LocalSource(str(tmp_path)).list_files()
    assert [f.path for f in files] == ["config.json", "link.json", "w/model.safetensors"]
    picked = select_files(files, include=("*.json", "w/*"), exclude=("link.*",))
    assert [f.path for f in picked] == ["config.json", "w/model.safetensors"]
    manifest_like = [*files, SourceFile(".hyperpod-dpd-manifest.json", 1, None)]
    assert len(select_files(manifest_like, (), ())) == 3  # a manifest is never staged as data
