"""What an upload is asked to do (the `upload` command's flags), checked before anything runs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from checkpoint.errors import UsageError

# S3's limits on multipart part sizes, and the transfer clients checkpoint/s3/transfers.py offers.
MIN_PART_SIZE = 5 * 2**20
MAX_PART_SIZE = 5 * 2**30
TRANSFER_CLIENTS = ("auto", "crt", "classic")
# Where the local checksum cache lives (checkpoint/checksum_cache.py); "off": no cache.
CACHE_ENV = "HYPERPOD_DPD_CHECKSUM_CACHE"

MAX_CONCURRENCY = 256


@dataclass(frozen=True)
class UploadOptions:
    region: str | None = None  # the cluster's Region: the bucket must be in it
    endpoint_url: str | None = None
    concurrency: int = 16
    part_size: int = 16 * 2**20
    transfer_client: str = "auto"  # auto | crt | classic
    max_bandwidth: int | None = None  # bytes/s (classic client)
    tmp_dir: Path | None = None  # where Hub files are staged one by one
    tmp_limit: int | None = None  # at most this many bytes staged at once
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    delete_extra: bool = False
    dry_run: bool = False
    progress: str = "auto"  # auto | tty | plain | none
    progress_interval: float = 15.0
    file_attempts: int = 3
    checksum_cache: bool = True  # remember local files' checksums between runs (checksum_cache.py)

    def validate(self) -> None:
        if self.endpoint_url is not None:
            url = urlsplit(self.endpoint_url)
            if url.scheme not in ("http", "https") or not url.hostname:
                raise UsageError(
                    f"--endpoint-url {self.endpoint_url!r}: an http:// or https:// URL of an S3 "
                    "endpoint, e.g. http://127.0.0.1:9000 (omit it for AWS)"
                )
        if not 1 <= self.concurrency <= MAX_CONCURRENCY:
            raise UsageError(
                f"--concurrency {self.concurrency}: use 1 to {MAX_CONCURRENCY} parallel requests"
            )
        if not MIN_PART_SIZE <= self.part_size <= MAX_PART_SIZE:
            raise UsageError(
                f"--part-size {self.part_size} bytes: S3 parts must be 5 MiB to 5 GiB (e.g. 16MiB)"
            )
        if self.max_bandwidth is not None and self.max_bandwidth <= 0:
            raise UsageError("--max-bandwidth must be a positive size per second, e.g. 100MiB")
        if self.tmp_dir is not None and not self.tmp_dir.is_dir():
            raise UsageError(f"--tmp-dir {self.tmp_dir}: no such directory; create it first")
