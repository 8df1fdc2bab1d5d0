"""Reruns from a local directory: what the checksum cache spares and what it must not hide."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from checkpoint import checksum_cache
from checkpoint.s3.transfers import Transfers
from checkpoint.upload import executor as upload_module
from tests.checkpoint.s3server import Fault
from tests.checkpoint.test_upload_local import (
    MANIFEST,
    PREFIX,
    SHARD1,
    crc,
    stored,
    upload,
)

# Every file this process opens while `opened_files()` is active, seen by an audit hook (which
# cannot be removed, hence the switch): Python's own open() and os.open() report here.
_OPENED: list[str] | None = None


def _audit(event: str, args: tuple) -> None:
    if _OPENED is not None and event == "open" and isinstance(args[0], str | bytes | os.PathLike):
        _OPENED.append(os.fsdecode(args[0]))


sys.addaudithook(_audit)


@contextlib.contextmanager
def opened_files() -> Iterator[list[str]]:
    global _OPENED
    _OPENED = []
    try:
        yield _OPENED
    finally:
        _OPENED = None


@pytest.fixture
def settled(monkeypatch):
    """The test's freshly written files count as settled (see checksum_cache.RACY_WINDOW_NS)."""
    monkeypatch.setattr(checksum_cache, "RACY_WINDOW_NS", 0)


def run_json(run_cli, *args: str) -> dict:
    code, out, err = run_cli(*args, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def test_a_rerun_with_everything_in_place_reads_no_local_file(
    s3, bucket, local_checkpoint, run_cli, settled, checksum_cache_dir
):
    src, contents = local_checkpoint
    first = run_json(run_cli, *upload(src, bucket, s3))["checksumCache"]
    assert (first["hits"], first["misses"]) == (0, len(contents))
    assert first["bytesHashed"] == sum(len(d) for d in contents.values())
    assert first["path"].startswith(str(checksum_cache_dir))

    mark = s3.recorder.mark()
    with opened_files() as opened:
        again = run_json(run_cli, *upload(src, bucket, s3))
    assert again["transferred"] == [] and sorted(again["kept"]) == sorted(contents)
    assert again["checksumCache"] | {"path": None} == {
        "enabled": True,
        "path": None,
        "hits": len(contents),
        "misses": 0,
        "bytesHashed": 0,
    }
    root = src.resolve()
    assert [p for p in opened if Path(p).resolve().is_relative_to(root)] == []
    assert s3.recorder.writes(mark, bucket) == []
    heads = [r.key for r in s3.recorder.since(mark, bucket) if r.op == "HeadObject"]
    assert sorted(heads) == sorted(f"{PREFIX}/{p}" for p in contents)  # one HEAD per object


@pytest.mark.parametrize("mtime", ["a new mtime", "the old mtime put back"])
def test_a_file_rewritten_in_place_with_the_same_size_is_read_and_uploaded_again(
    mtime, s3, s3_client, bucket, local_checkpoint, run_cli, settled
):
    src, contents = local_checkpoint
    assert run_json(run_cli, *upload(src, bucket, s3))["checksumCache"]["misses"] == len(contents)
    name = "model-00002-of-00002.safetensors"
    path = src / name
    before = path.stat()
    changed = bytes([contents[name][0] ^ 0xFF]) + contents[name][1:]
    with path.open("r+b") as f:  # in place: same inode, same size
        f.write(changed[:1])
    later = before.st_mtime_ns + (5 * 10**9 if mtime == "a new mtime" else 0)
    os.utime(path, ns=(before.st_atime_ns, later))
    assert (path.stat().st_size, path.stat().st_ino) == (before.st_size, before.st_ino)

    mark = s3.recorder.mark()
    again = run_json(run_cli, *upload(src, bucket, s3))
    assert again["transferred"] == [name]
    assert again["checksumCache"]["hits"] == len(contents) - 1
    assert again["checksumCache"]["misses"] == 1
    assert again["checksumCache"]["bytesHashed"] == len(changed)
    assert again["manifestWritten"] is True
    objects = stored(s3_client, bucket)
    assert objects[f"{PREFIX}/{name}"] == changed
    entry = next(f for f in json.loads(objects[MANIFEST])["files"] if f["path"] == name)
    assert entry["crc64nvme"] == crc(changed)
    assert {w.key for w in s3.recorder.writes(mark, bucket)} == {f"{PREFIX}/{name}", MANIFEST}


def test_a_corrupt_cache_file_is_ignored_and_rebuilt(
    s3, bucket, local_checkpoint, run_cli, settled
):
    src, contents = local_checkpoint
    cache_file = Path(run_json(run_cli, *upload(src, bucket, s3))["checksumCache"]["path"])
    cache_file.write_bytes(b'{"format": "hyperpod-dpd/checksum-cache/v1", "files": {"/x": ')

    mark = s3.recorder.mark()
    code, out, err = run_cli(*upload(src, bucket, s3), "--format", "json")
    assert code == 0, err
    assert f"ignoring the corrupt checksum cache {cache_file}" in err
    result = json.loads(out)
    assert result["transferred"] == [] and s3.recorder.writes(mark, bucket) == []
    assert result["checksumCache"]["misses"] == len(contents)  # every file read again
    assert json.loads(cache_file.read_text())["format"] == checksum_cache.FORMAT  # rebuilt
    assert run_json(run_cli, *upload(src, bucket, s3))["checksumCache"]["hits"] == len(contents)


def test_no_checksum_cache_reads_every_file_every_time(
    s3, bucket, local_checkpoint, run_cli, settled, checksum_cache_dir
):
    src, contents = local_checkpoint
    for _ in range(2):
        cache = run_json(run_cli, *upload(src, bucket, s3, "--no-checksum-cache"))
        assert cache["checksumCache"] == {
            "enabled": False,
            "path": None,
            "hits": 0,
            "misses": len(contents),
            "bytesHashed": sum(len(d) for d in contents.values()),
        }
    assert not checksum_cache_dir.exists()


def test_files_changed_moments_before_the_upload_are_read_again_by_the_rerun(
    s3, bucket, local_checkpoint, run_cli, monkeypatch
):
    # Written within the racy window (an hour here, to be sure): another write in the same tick
    # of a coarse filesystem clock could leave the stat unchanged, so none is trusted.
    monkeypatch.setattr(checksum_cache, "RACY_WINDOW_NS", 3600 * 10**9)
    src, contents = local_checkpoint
    run_json(run_cli, *upload(src, bucket, s3))
    again = run_json(run_cli, *upload(src, bucket, s3))["checksumCache"]
    assert (again["hits"], again["misses"]) == (0, len(contents))


def test_a_failed_run_keeps_its_hashes_and_the_rerun_reads_only_files_it_never_read(
    s3, s3_client, bucket, local_checkpoint, run_cli, settled
):
    # A first upload hashes each file right before sending it (nothing to compare it with
    # before); those hashes must survive a run that fails partway, or the rerun reads again
    # every file the failed run had already read, uploaded or not.
    src, contents = local_checkpoint
    fault = s3.recorder.add_fault(
        Fault("CreateMultipartUpload", bucket, SHARD1, times=100, status=403, code="AccessDenied")
    )
    code, _, err = run_cli(*upload(src, bucket, s3, "--concurrency", "1"))
    assert code == 2, err
    landed = {k.removeprefix(f"{PREFIX}/") for k in stored(s3_client, bucket)}
    assert SHARD1.removeprefix(f"{PREFIX}/") not in landed
    fault.times = 0

    rerun = run_json(run_cli, *upload(src, bucket, s3))
    read_before = landed | {SHARD1.removeprefix(f"{PREFIX}/")}  # the failed one was read too
    never_read = set(contents) - read_before
    assert never_read, "the failure stopped nothing: the test proves nothing"
    assert rerun["checksumCache"]["hits"] == len(read_before)
    assert rerun["checksumCache"]["misses"] == len(never_read)
    assert rerun["checksumCache"]["bytesHashed"] == sum(len(contents[p]) for p in never_read)
    assert sorted(rerun["transferred"]) == sorted(set(contents) - landed)


def test_a_file_that_cannot_be_read_for_its_upload_is_a_clear_error(
    s3, s3_client, bucket, local_checkpoint, run_cli, monkeypatch
):
    # With nothing in the bucket, files are first read when they are uploaded: a read error
    # there names the file and exits 2 like one found while planning, and writes no manifest.
    src, _ = local_checkpoint
    real = checksum_cache.digest_file_stat
    broken = src / "model-00002-of-00002.safetensors"

    def digest_file_stat(path, **kwargs):
        if Path(path) == broken:
            raise OSError(5, "Input/output error")
        return real(path, **kwargs)

    monkeypatch.setattr(checksum_cache, "digest_file_stat", digest_file_stat)
    code, _, err = run_cli(*upload(src, bucket, s3))
    assert code == 2
    assert f"error: cannot read {broken}: Input/output error" in err
    assert "(1 failed;" in err and "no manifest was written" in err  # during the transfers
    assert "Traceback" not in err and "internal error" not in err
    assert MANIFEST not in stored(s3_client, bucket)


def test_a_changed_file_that_cannot_be_opened_leaves_the_staged_checkpoint_alone(
    s3, s3_client, bucket, local_checkpoint, run_cli, monkeypatch
):
    # The rerun would rewrite that object, so it would delete the manifest first; a file it
    # cannot even open must stop it before that, not after (readers keep a whole checkpoint).
    src, _ = local_checkpoint
    assert run_cli(*upload(src, bucket, s3))[0] == 0
    changed = src / "model-00002-of-00002.safetensors"
    with changed.open("ab") as f:
        f.write(b"more")
    real_open = os.open

    def refusing_open(path, flags, *args, **kwargs):
        if os.fspath(path) == str(changed):
            raise PermissionError(13, "Permission denied")
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refusing_open)
    mark = s3.recorder.mark()
    code, _, err = run_cli(*upload(src, bucket, s3))
    assert code == 2
    assert f"error: cannot read {changed}: Permission denied" in err
    assert s3.recorder.writes(mark, bucket) == []
    assert MANIFEST in stored(s3_client, bucket)


def test_a_cache_that_cannot_be_written_is_said_once(
    s3, bucket, local_checkpoint, run_cli, settled, checksum_cache_dir, monkeypatch
):
    checksum_cache_dir.parent.mkdir(parents=True, exist_ok=True)
    checksum_cache_dir.write_text("a file where the cache directory should be")
    monkeypatch.setattr(upload_module, "CACHE_SAVE_SECONDS", 0)  # a save after every file
    src, _ = local_checkpoint
    code, _, err = run_cli(*upload(src, bucket, s3, "--concurrency", "1"))
    assert code == 0, err
    assert err.count("cannot write the checksum cache") == 1


def test_hashes_reach_the_disk_as_files_finish_not_only_at_the_end(
    s3, bucket, local_checkpoint, run_cli, settled, checksum_cache_dir, monkeypatch
):
    # kill -9 runs no cleanup: what the rerun can reuse is what was on disk when it died. With
    # the save interval at 0, when the last file starts uploading every earlier one is on disk.
    src, contents = local_checkpoint
    monkeypatch.setattr(upload_module, "CACHE_SAVE_SECONDS", 0)
    order = sorted(contents)
    on_disk: list[set[str]] = []
    real = Transfers.upload

    def upload_spy(self, path, *args, **kwargs):
        if path.name == order[-1]:
            files = set()
            for cache_file in checksum_cache_dir.rglob("*.json"):
                files |= {Path(p).name for p in json.loads(cache_file.read_text())["files"]}
            on_disk.append(files)
        return real(self, path, *args, **kwargs)

    monkeypatch.setattr(Transfers, "upload", upload_spy)
    assert run_cli(*upload(src, bucket, s3, "--concurrency", "1"))[0] == 0
    assert on_disk == [set(order[:-1])]  # the last one: hashed, saved when it is done
