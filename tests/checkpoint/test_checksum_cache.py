"""The local checksum cache: unchanged files are not read again, changed ones always are."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from awscrt import checksums

from checkpoint import checksum_cache
from checkpoint.checksum_cache import CACHE_ENV, ChecksumCache, cache_dir
from checkpoint.hashing import crc64nvme_b64


def crc(data: bytes) -> str:
    return crc64nvme_b64(checksums.crc64nvme(data))


@pytest.fixture
def settled(monkeypatch):
    """Files written by the test count as settled (not changed within the racy window)."""
    monkeypatch.setattr(checksum_cache, "RACY_WINDOW_NS", 0)


def open_cache(root: Path, notes: list[str] | None = None) -> ChecksumCache:
    return ChecksumCache.for_source(
        root, enabled=True, log=(notes.append if notes is not None else lambda _: None)
    )


def the_file(cache: ChecksumCache) -> Path:
    assert cache.file is not None
    return cache.file


def test_an_unchanged_file_is_taken_from_the_cache_of_a_later_run(tmp_path, settled):
    path = tmp_path / "shard"
    path.write_bytes(b"x" * 100_000)
    first = open_cache(tmp_path)
    assert first.digest(path).crc64nvme == crc(b"x" * 100_000)
    first.save()
    assert (first.stats.hits, first.stats.misses, first.stats.bytes_hashed) == (0, 1, 100_000)

    again = open_cache(tmp_path)
    seen: list[int] = []
    assert again.digest(path, on_bytes=seen.append).crc64nvme == crc(b"x" * 100_000)
    assert (again.stats.hits, again.stats.misses, again.stats.bytes_hashed) == (1, 0, 0)
    assert seen == [100_000]  # progress still counts the file as checked


@pytest.mark.parametrize(
    "change",
    ["same size, new mtime", "same size, mtime put back", "replaced, same size and mtime"],
)
def test_a_changed_file_is_read_again(change, tmp_path, settled):
    path = tmp_path / "shard"
    path.write_bytes(b"a" * 4096)
    cache = open_cache(tmp_path)
    cache.digest(path)
    cache.save()
    before = path.stat()
    new = b"b" * 4096
    if change == "same size, new mtime":
        with path.open("r+b") as f:
            f.write(new)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
    elif change == "same size, mtime put back":  # `touch -r`, rsync -t, tar: only ctime tells
        with path.open("r+b") as f:
            f.write(new)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    else:  # a new file renamed over the old one (a new inode), its mtime set to the old one's
        other = tmp_path / "shard.new"
        other.write_bytes(new)
        os.utime(other, ns=(before.st_atime_ns, before.st_mtime_ns))
        other.replace(path)
    assert path.stat().st_size == before.st_size

    again = open_cache(tmp_path)
    assert again.digest(path).crc64nvme == crc(new)
    assert (again.stats.hits, again.stats.misses) == (0, 1)


def test_a_file_changed_just_before_it_was_hashed_is_not_remembered(tmp_path, monkeypatch):
    path = tmp_path / "shard"
    path.write_bytes(b"fresh")
    cache = open_cache(tmp_path)
    cache.digest(path)  # its ctime is within the racy window: another write could keep its stat
    cache.save()
    again = open_cache(tmp_path)
    again.digest(path)
    assert again.stats.misses == 1

    # The same file, hashed once its last change is older than the window, is remembered.
    later = path.stat().st_ctime_ns + checksum_cache.RACY_WINDOW_NS
    monkeypatch.setattr(checksum_cache, "_now_ns", lambda: later)
    settled_run = open_cache(tmp_path)
    settled_run.digest(path)
    settled_run.save()
    third = open_cache(tmp_path)
    third.digest(path)
    assert (third.stats.hits, third.stats.misses) == (1, 0)


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b"\xff\xfe garbage",
        json.dumps({"format": "other/v9", "files": {}}).encode(),
        json.dumps({"format": checksum_cache.FORMAT, "files": []}).encode(),
        json.dumps(
            {"format": checksum_cache.FORMAT, "files": {"/x": {"size": "12", "crc64nvme": 1}}}
        ).encode(),
    ],
)
def test_a_corrupt_cache_file_is_ignored_and_rebuilt(content, tmp_path, settled):
    path = tmp_path / "shard"
    path.write_bytes(b"z" * 1000)
    the_file(open_cache(tmp_path)).parent.mkdir(parents=True, exist_ok=True)
    the_file(open_cache(tmp_path)).write_bytes(content)

    notes: list[str] = []
    cache = open_cache(tmp_path, notes)
    assert cache.digest(path).crc64nvme == crc(b"z" * 1000)
    assert cache.stats.misses == 1
    assert any("ignoring" in n and "rebuilding it" in n for n in notes), notes
    cache.save()
    assert json.loads(the_file(cache).read_text())["format"] == checksum_cache.FORMAT
    assert open_cache(tmp_path).digest(path).crc64nvme == crc(b"z" * 1000)


def test_an_entry_whose_stat_does_not_match_is_not_used(tmp_path, settled):
    path = tmp_path / "shard"
    path.write_bytes(b"q" * 10)
    cache = open_cache(tmp_path)
    cache.digest(path)
    cache.save()
    doc = json.loads(the_file(cache).read_text())
    doc["files"][str(path)]["size"] = 11  # a stat that no longer matches: the entry is dead
    the_file(cache).write_text(json.dumps(doc))
    again = open_cache(tmp_path)
    assert again.digest(path).crc64nvme == crc(b"q" * 10)
    assert again.stats.misses == 1


def test_where_the_cache_lives(tmp_path, monkeypatch):
    assert cache_dir({CACHE_ENV: str(tmp_path / "c")}) == tmp_path / "c"
    for off in ("off", "0", "", "none"):
        assert cache_dir({CACHE_ENV: off}) is None
    assert cache_dir({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "hyperpod-dpd" / "checksums"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    expected = tmp_path / "home" / ".cache" / "hyperpod-dpd" / "checksums"
    assert cache_dir({"XDG_CACHE_HOME": "relative/ignored"}) == expected
    assert cache_dir({}) == expected


def test_a_disabled_cache_hashes_every_time_and_writes_nothing(tmp_path, monkeypatch, settled):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    path = tmp_path / "shard"
    path.write_bytes(b"n" * 100)
    for _ in range(2):
        cache = ChecksumCache.for_source(tmp_path, enabled=False, log=lambda _: None)
        cache.digest(path)
        cache.save()
        assert (cache.stats.hits, cache.stats.misses, cache.stats.path) == (0, 1, None)
    assert not (tmp_path / "cache").exists()


def test_an_unwritable_cache_is_a_note_not_a_failure(tmp_path, monkeypatch, settled):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache directory should be")
    monkeypatch.setenv(CACHE_ENV, str(blocker / "checksums"))
    path = tmp_path / "shard"
    path.write_bytes(b"w" * 100)
    notes: list[str] = []
    cache = open_cache(tmp_path, notes)
    assert cache.digest(path).crc64nvme == crc(b"w" * 100)
    cache.save()
    assert any("cannot write the checksum cache" in n for n in notes), notes


def test_entries_of_deleted_files_are_dropped_and_others_kept(tmp_path, settled):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(b"1")
    b.write_bytes(b"2")
    cache = open_cache(tmp_path)
    cache.digest(a)
    cache.digest(b)
    cache.save()
    b.unlink()
    c = tmp_path / "c"
    c.write_bytes(b"3")
    later = open_cache(tmp_path)  # a run that sees only c (say, --include c)
    later.digest(c)
    later.save()
    assert sorted(json.loads(the_file(later).read_text())["files"]) == [str(a), str(c)]
