"""Checksums of local files remembered between runs, so that a rerun does not re-read them.

A rerun of `checkpoint upload` from a local directory must compare every file with its object
(S3's CRC64NVME, from a HeadObject); hashing the files again would read the whole checkpoint.
This cache remembers each file's CRC64NVME (and SHA-256 when one was computed) keyed by its
absolute path and what stat() says of it: size, mtime_ns, ctime_ns, inode and device. Writing to
a file changes its mtime and its ctime (which, unlike mtime, cannot be set back from user
space), replacing it gives a new inode: an entry whose stat still matches is the checksum of
the bytes on disk.

One exception, as for git's index ("racy git"): a file changed again within one tick of the
filesystem's clock after it was hashed (coarse timestamps: a jiffy on Linux, a second or two on
some network and FUSE filesystems) keeps the same stat. A digest is therefore only remembered
when the file's last change (mtime, ctime) is at least RACY_WINDOW_NS older than the moment
hashing started; a file written just before the upload is hashed again on the next run.

Where: $HYPERPOD_DPD_CHECKSUM_CACHE, else $XDG_CACHE_HOME/hyperpod-dpd/checksums, else
~/.cache/hyperpod-dpd/checksums; one JSON file per source directory, replaced atomically (a
temp file renamed over it; temp files that killed runs left are removed). A file that cannot be
read or parsed (cut short, garbage) is ignored, with a note, and replaced; one that cannot be
written (a read-only home in a container) only costs the next run a re-read.
`--no-checksum-cache` (or HYPERPOD_DPD_CHECKSUM_CACHE=off) hashes every file every time.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checkpoint.hashing import Digests, digest_file_stat
from checkpoint.upload.options import CACHE_ENV

DISABLED_VALUES = ("off", "none", "0", "false", "no")
FORMAT = "hyperpod-dpd/checksum-cache/v1"
RACY_WINDOW_NS = 2_000_000_000
MAX_ENTRIES = 100_000  # per source directory; entries of files not seen this run go first

# A save writes a temp file (this prefix) and renames it over the cache file: one older than
# this was left by a run killed between the two (a live save takes milliseconds).
TEMP_PREFIX = ".tmp-"
STALE_TEMP_SECONDS = 600

Log = Callable[[str], None]
_now_ns = time.time_ns  # the clock the racy window is measured on (a seam for the tests)


def cache_dir(environ: Mapping[str, str] | None = None) -> Path | None:
    """The directory of the cache files, or None when the environment turns the cache off (or
    there is no home directory to put it in: a container running as an unnamed user)."""
    env = os.environ if environ is None else environ
    override = env.get(CACHE_ENV)
    if override is not None:
        if override.strip().lower() in ("", *DISABLED_VALUES):
            return None
        return Path(override).expanduser()
    xdg = env.get("XDG_CACHE_HOME", "")
    if xdg and Path(xdg).is_absolute():
        base = Path(xdg)
    else:
        try:
            base = Path.home() / ".cache"
        except (RuntimeError, KeyError):
            return None
    return base / "hyperpod-dpd" / "checksums"


def _stat_key(st: os.stat_result) -> tuple[int, int, int, int, int]:
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


@dataclass(frozen=True)
class _Entry:
    key: tuple[int, int, int, int, int]  # size, mtime_ns, ctime_ns, inode, device
    crc64nvme: str
    sha256: str | None = None

    def to_json(self) -> dict[str, Any]:
        size, mtime, ctime, ino, dev = self.key
        doc: dict[str, Any] = {
            "size": size,
            "mtimeNs": mtime,
            "ctimeNs": ctime,
            "inode": ino,
            "device": dev,
            "crc64nvme": self.crc64nvme,
        }
        if self.sha256:
            doc["sha256"] = self.sha256
        return doc

    @classmethod
    def from_json(cls, doc: Any) -> _Entry:
        """ValueError unless `doc` is a well-formed entry."""
        if not isinstance(doc, dict):
            raise ValueError("an entry is not an object")
        fields = [doc.get(name) for name in ("size", "mtimeNs", "ctimeNs", "inode", "device")]
        if not all(type(v) is int and v >= 0 for v in fields):
            raise ValueError("an entry's stat fields are not whole numbers")
        crc, sha = doc.get("crc64nvme"), doc.get("sha256")
        if not isinstance(crc, str) or len(crc) != 12 or not crc.endswith("="):
            raise ValueError("an entry's crc64nvme is malformed")
        if sha is not None and (not isinstance(sha, str) or len(sha) != 64):
            raise ValueError("an entry's sha256 is malformed")
        return cls(key=tuple(fields), crc64nvme=crc, sha256=sha)  # type: ignore[arg-type]


@dataclass
class CacheStats:
    path: str | None  # the cache file; None when the cache is off
    hits: int = 0  # files whose checksums came from the cache (not read)
    misses: int = 0  # files read and hashed
    bytes_hashed: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "enabled": self.path is not None,
            "path": self.path,
            "hits": self.hits,
            "misses": self.misses,
            "bytesHashed": self.bytes_hashed,
        }


class ChecksumCache:
    """The checksums of the files below one source directory; thread-safe."""

    def __init__(self, file: Path | None, log: Log):
        self.file = file
        self.stats = CacheStats(str(file) if file else None)
        self._log = log
        self._lock = threading.Lock()
        self._writing = threading.Lock()  # one save at a time: a newer one never overwritten
        self._write_failed = False
        self._swept = False  # temp files of killed runs removed (once per run)
        self._entries: dict[str, _Entry] = {}
        self._seen: set[str] = set()
        self._dirty = False
        if file is not None:
            self._entries = self._load(file, note=True)

    @classmethod
    def for_source(cls, root: Path, *, enabled: bool, log: Log) -> ChecksumCache:
        """The cache of the (resolved) source directory `root`; a no-op cache when disabled."""
        directory = cache_dir() if enabled else None
        if directory is None:
            return cls(None, log)
        name = hashlib.sha256(str(root).encode()).hexdigest()[:32]
        return cls(directory / f"{name}.json", log)

    # -- lookups -------------------------------------------------------------------------------
    def digest(
        self,
        path: Path,
        *,
        sha256: bool = False,
        on_bytes: Callable[[int], None] | None = None,
        refresh: bool = False,
    ) -> Digests:
        """The checksums of the file at `path` (absolute) as it is now: from the cache when its
        stat matches the entry's, else read (and remembered unless it changed very recently or
        while being read). `refresh`: read it whatever the cache says."""
        name = str(path)
        if self.file is not None and not refresh:
            st = os.stat(path)
            with self._lock:
                entry = self._entries.get(name)
                self._seen.add(name)
            if entry is not None and entry.key == _stat_key(st) and (entry.sha256 or not sha256):
                with self._lock:
                    self.stats.hits += 1
                if on_bytes is not None:
                    on_bytes(st.st_size)
                return Digests(size=st.st_size, crc64nvme=entry.crc64nvme, sha256=entry.sha256)
        started = _now_ns()
        digests, before, after = digest_file_stat(path, sha256=sha256, on_bytes=on_bytes)
        with self._lock:
            self.stats.misses += 1
            self.stats.bytes_hashed += digests.size
            if self.file is None:
                return digests
            self._seen.add(name)
            last_change = max(before.st_mtime_ns, before.st_ctime_ns)
            if _stat_key(before) == _stat_key(after) and started - last_change >= RACY_WINDOW_NS:
                self._entries[name] = _Entry(_stat_key(before), digests.crc64nvme, digests.sha256)
                self._dirty = True
            elif self._entries.pop(name, None) is not None:
                self._dirty = True
        return digests

    # -- persistence ---------------------------------------------------------------------------
    def _load(self, file: Path, *, note: bool) -> dict[str, _Entry]:
        try:
            data = file.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            if note:
                self._log(
                    f"note: ignoring the checksum cache {file} ({exc.strerror or exc}); "
                    "rebuilding it"
                )
                with self._lock:
                    self._dirty = True  # replaced by the first save
            return {}
        try:
            doc = json.loads(data.decode("utf-8"))
            if not isinstance(doc, dict) or doc.get("format") != FORMAT:
                raise ValueError(f"not a {FORMAT} document")
            files = doc.get("files")
            if not isinstance(files, dict):
                raise ValueError("no 'files' object")
            return {str(k): _Entry.from_json(v) for k, v in files.items()}
        # JSONDecodeError, UnicodeDecodeError: ValueErrors; RecursionError: nested too deep
        except (ValueError, TypeError, RecursionError) as exc:
            if note:
                self._log(
                    f"note: ignoring the corrupt checksum cache {file} ({exc}); rebuilding it"
                )
            with self._lock:
                self._dirty = True  # rewrite it even if every file turns out to be a miss
            return {}

    def save(self, *, wait: bool = True) -> None:
        """Write the cache file if anything changed: merged with what another run may have
        written meanwhile, entries of files seen this run first, then older ones still on disk.
        `wait=False`: skip it if another save is under way (that one or the next takes care)."""
        if self.file is None:
            return
        if not self._writing.acquire(blocking=wait):
            return
        try:
            self._save(self.file)
        finally:
            self._writing.release()

    def _save(self, file: Path) -> None:
        with self._lock:
            if not self._dirty:
                return
            mine = dict(self._entries)
            seen = set(self._seen)
            self._dirty = False
        others = self._load(file, note=False)
        merged = {k: v for k, v in mine.items() if k in seen}
        for name, entry in {**others, **mine}.items():
            if len(merged) >= MAX_ENTRIES:
                break
            if name not in merged and name not in seen and os.path.lexists(name):
                merged[name] = entry
        doc = {"format": FORMAT, "files": {k: v.to_json() for k, v in sorted(merged.items())}}
        try:
            file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            if not self._swept:
                self._swept = True
                _remove_stale_temp_files(file.parent)
            fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=".json", dir=file.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    json.dump(doc, out, separators=(",", ":"))
                os.replace(tmp, file)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except OSError as exc:
            with self._lock:
                self._dirty = True  # tried again by the next save
            if not self._write_failed:  # said once, however often it is tried
                self._write_failed = True
                self._log(
                    f"note: cannot write the checksum cache {file} ({exc.strerror or exc}); "
                    "the next run reads the files again"
                )


def _remove_stale_temp_files(directory: Path) -> None:
    """Delete the temp files that runs killed in the middle of a save left in `directory`."""
    cutoff = time.time() - STALE_TEMP_SECONDS
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory):
            if entry.name.startswith(TEMP_PREFIX) and entry.name.endswith(".json"):
                with contextlib.suppress(OSError):
                    if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                        os.unlink(entry.path)
