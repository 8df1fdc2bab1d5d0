"""Where a checkpoint comes from: the Hugging Face Hub, a local directory, or S3.

Each source lists its files with their sizes and the checksums it publishes (the Hub publishes
SHA-256 for LFS files and git's blob SHA-1 for the others), and an identity of each file's
content (`source_id`) that the destination object records in its metadata, so that a rerun can
tell, without downloading anything, which objects already hold the right bytes.

  hf://ORG/NAME      --revision <40-hex commit SHA>; token from HF_TOKEN; endpoint HF_ENDPOINT
  /a/local/dir       every regular file below it (.git/ and .cache/huggingface/ left out)
  s3://bucket/prefix copied server-side (no bytes through this machine)
"""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from checkpoint.errors import (
    DiskFullError,
    SourceError,
    TransferError,
    UsageError,
)
from checkpoint.manifest import MANIFEST_NAME

COMMIT_SHA = re.compile(r"^[0-9a-f]{40}$")
DEFAULT_HF_ENDPOINT = "https://huggingface.co"
HF_TOKEN_CONFIG = "pulumi config set --secret hyperpod-dpd:hfToken <token>"
LOCAL_EXCLUDES = (".git/*", ".cache/huggingface/*")
SOURCE_FORMS = "hf://ORG/NAME, s3://BUCKET/PREFIX or a local directory"


@dataclass(frozen=True)
class SourceFile:
    path: str  # relative, '/'-separated: becomes <prefix>/<path>
    size: int
    source_id: str | None  # content identity published by the source; None: from the bytes
    sha256: str | None = None  # published SHA-256 (hex) the bytes must match
    git_sha1: str | None = None  # published git blob id (hex) the bytes must match
    location: str = ""  # local path or source S3 key


@runtime_checkable
class Source(Protocol):
    uri: str  # recorded in the manifest
    revision: str | None

    def list_files(self) -> list[SourceFile]: ...


@runtime_checkable
class FileSource(Source, Protocol):
    """A source whose files are read from local disk (downloaded first when `stages` is True)."""

    stages: bool

    def fetch(
        self, f: SourceFile, workdir: Path, on_bytes: Callable[[int], None]
    ) -> contextlib.AbstractContextManager[Path]: ...


def select_files(
    files: list[SourceFile], include: tuple[str, ...], exclude: tuple[str, ...]
) -> list[SourceFile]:
    """Files matching any --include pattern (all when none) and no --exclude pattern."""
    chosen = []
    for f in files:
        if f.path == MANIFEST_NAME or f.path.endswith("/" + MANIFEST_NAME):
            continue
        if include and not any(fnmatch.fnmatchcase(f.path, p) for p in include):
            continue
        if any(fnmatch.fnmatchcase(f.path, p) for p in exclude):
            continue
        chosen.append(f)
    return sorted(chosen, key=lambda f: f.path)


# -- local directory ------------------------------------------------------------------------
class LocalSource:
    stages = False

    def __init__(self, directory: str, revision: str | None = None):
        path = Path(directory).expanduser()
        if not path.exists():
            raise SourceError(f"--source {directory}: no such directory (expected {SOURCE_FORMS})")
        if not path.is_dir():
            raise SourceError(
                f"--source {directory} is a file, not a directory of checkpoint files"
            )
        self.root = path.resolve()
        self.uri = str(self.root)
        self.revision = revision

    def list_files(self) -> list[SourceFile]:
        files = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames.sort()
            for name in sorted(filenames):
                full = Path(dirpath) / name
                rel = full.relative_to(self.root).as_posix()
                if any(fnmatch.fnmatchcase(rel, p) for p in LOCAL_EXCLUDES):
                    continue
                try:
                    st = full.stat()  # follows symlinks (a Hugging Face cache snapshot is links)
                except OSError as exc:
                    raise SourceError(f"cannot read {full}: {exc.strerror}") from None
                if not full.is_file():
                    continue
                files.append(
                    SourceFile(path=rel, size=st.st_size, source_id=None, location=str(full))
                )
        return files

    def fetch(
        self, f: SourceFile, workdir: Path, on_bytes: Callable[[int], None]
    ) -> contextlib.AbstractContextManager[Path]:
        return contextlib.nullcontext(Path(f.location))


# -- Hugging Face Hub -----------------------------------------------------------------------
def parse_hf_uri(uri: str) -> str:
    """hf://org/model -> org/model (UsageError naming the accepted form otherwise)."""
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    repo_id = uri[len("hf://") :].strip("/")
    if "@" in repo_id:
        raise UsageError(
            f"--source {uri}: give the revision with --revision, not after '@' "
            f"(e.g. --source hf://{repo_id.split('@')[0]} --revision <commit SHA>)"
        )
    if repo_id.startswith(("datasets/", "spaces/")):
        raise UsageError(f"--source {uri}: only model repositories are supported (hf://ORG/NAME)")
    try:
        validate_repo_id(repo_id)
    except HFValidationError as exc:
        raise UsageError(
            f"--source {uri} is not a model id of the form hf://ORG/NAME: {exc}"
        ) from None
    return repo_id


class HfSource:
    """A model repository at one commit, read through huggingface_hub."""

    stages = True

    def __init__(
        self,
        repo_id: str,
        revision: str | None,
        *,
        token: str | None = None,
        endpoint: str | None = None,
    ):
        self.repo_id = repo_id
        self.token = token or None
        self.endpoint = (endpoint or "").rstrip("/") or None
        self.uri = f"hf://{repo_id}"
        if revision is None or not COMMIT_SHA.match(revision):
            got = "" if revision is None else f" (got {revision!r})"
            raise UsageError(
                f"--revision must be a full 40-hex commit SHA for hf:// sources{got}: a pinned "
                f"commit keeps the staged files from changing under a deployed endpoint"
                f"{self._head_hint()}"
            )
        self.revision = revision

    @property
    def page(self) -> str:
        return f"{self.endpoint or DEFAULT_HF_ENDPOINT}/{self.repo_id}"

    def _api(self):
        from huggingface_hub import HfApi

        return HfApi(endpoint=self.endpoint, token=self.token)

    def _head_hint(self) -> str:
        """`; main is at <sha> now: rerun with --revision <sha>`, when the Hub can be asked."""
        try:
            sha = self._api().model_info(self.repo_id).sha
        except Exception:  # only a hint: the error it decorates is the point
            return f"; find one at {self.page}/commits/main"
        return f"; {self.repo_id} main is at {sha} now: rerun with --revision {sha}"

    def list_files(self) -> list[SourceFile]:
        try:
            info = self._api().model_info(self.repo_id, revision=self.revision, files_metadata=True)
        except Exception as exc:
            raise self.error(exc, "list the files of") from None
        if info.sha and info.sha != self.revision:
            raise SourceError(
                f"{self.endpoint or DEFAULT_HF_ENDPOINT} answered commit {info.sha} for "
                f"--revision {self.revision} of {self.repo_id}: check HF_ENDPOINT"
            )
        files = []
        for s in info.siblings or []:
            if s.size is None:
                raise SourceError(f"the Hub gave no size for {self.repo_id}/{s.rfilename}")
            if s.lfs is not None:
                files.append(
                    SourceFile(
                        path=s.rfilename,
                        size=s.size,
                        source_id=f"sha256:{s.lfs.sha256}",
                        sha256=s.lfs.sha256,
                    )
                )
            else:
                files.append(
                    SourceFile(
                        path=s.rfilename,
                        size=s.size,
                        source_id=f"git-sha1:{s.blob_id}",
                        git_sha1=s.blob_id,
                    )
                )
        return files

    def check_access(self, f: SourceFile) -> None:
        """Fail before any transfer when the files cannot be downloaded (gated, no token)."""
        from huggingface_hub import get_hf_file_metadata, hf_hub_url

        url = hf_hub_url(self.repo_id, f.path, revision=self.revision, endpoint=self.endpoint)
        try:
            get_hf_file_metadata(url, token=self.token, endpoint=self.endpoint)
        except Exception as exc:
            raise self.error(exc, "download from") from None

    @contextlib.contextmanager
    def fetch(
        self, f: SourceFile, workdir: Path, on_bytes: Callable[[int], None]
    ) -> Iterator[Path]:
        from huggingface_hub import hf_hub_download

        tmp = Path(tempfile.mkdtemp(prefix=".hf-", dir=workdir))
        try:
            try:
                path = hf_hub_download(
                    self.repo_id,
                    f.path,
                    revision=self.revision,
                    local_dir=tmp,
                    token=self.token,
                    endpoint=self.endpoint,
                    tqdm_class=_forwarding_bar(on_bytes),
                )
            except Exception as exc:
                raise self.error(exc, "download from", f.path, workdir) from None
            yield Path(path)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def error(
        self, exc: Exception, action: str, path: str | None = None, workdir: Path | None = None
    ) -> Exception:
        """A message the user can act on for an exception of huggingface_hub or the network."""
        import httpx2
        from huggingface_hub.errors import (
            DisabledRepoError,
            GatedRepoError,
            HfHubHTTPError,
            OfflineModeIsEnabled,
            RemoteEntryNotFoundError,
            RepositoryNotFoundError,
            RevisionNotFoundError,
        )

        what = f"{self.repo_id}/{path}" if path else self.repo_id
        token_state = "HF_TOKEN is not set" if not self.token else "HF_TOKEN has no access to it"
        if isinstance(exc, GatedRepoError):
            if not self.token:
                return SourceError(
                    f"cannot {action} {self.repo_id}: the model is gated and HF_TOKEN is not set. "
                    f"Accept its terms at {self.page} while logged in, create a read token, then "
                    f"`export HF_TOKEN=hf_...` (for the stack's staging Job: `{HF_TOKEN_CONFIG}`)"
                )
            return SourceError(
                f"cannot {action} {self.repo_id}: the model is gated and the account of HF_TOKEN "
                f"has not been granted access. Accept its terms at {self.page} with that account, "
                f"or use another account's token (stack: `{HF_TOKEN_CONFIG}`)"
            )
        if isinstance(exc, RepositoryNotFoundError):
            return SourceError(
                f"model {self.repo_id} was not found on {self.endpoint or DEFAULT_HF_ENDPOINT}: "
                f"check --source hf://ORG/NAME; if the model is private or gated, {token_state} "
                f"(set HF_TOKEN to a token with access; stack: `{HF_TOKEN_CONFIG}`)"
            )
        if isinstance(exc, RevisionNotFoundError):
            return SourceError(
                f"--revision {self.revision} does not exist in {self.repo_id}: use a commit SHA "
                f"listed at {self.page}/commits/main"
            )
        if isinstance(exc, RemoteEntryNotFoundError):
            return SourceError(
                f"{what} is listed at revision {self.revision} but the Hub has no such file: "
                "rerun (the listing may have changed) or pick another revision"
            )
        if isinstance(exc, DisabledRepoError):
            return SourceError(f"model {self.repo_id} is disabled on the Hub: pick another model")
        if isinstance(exc, OfflineModeIsEnabled):
            return SourceError(f"cannot {action} {self.repo_id}: HF_HUB_OFFLINE is set; unset it")
        if isinstance(exc, HfHubHTTPError):
            status = exc.response.status_code if exc.response is not None else None
            if status == 401:
                return SourceError(
                    f"the Hub rejected HF_TOKEN (401) when asked to {action} {what}: create a new "
                    f"read token and set HF_TOKEN (stack: `{HF_TOKEN_CONFIG}`)"
                )
            if status == 403:
                return SourceError(
                    f"the Hub refused access (403) to {what}: {token_state}; "
                    f"check the token's permissions (stack: `{HF_TOKEN_CONFIG}`)"
                )
            return TransferError(f"the Hub answered {status} when asked to {action} {what}: {exc}")
        if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
            where = workdir or tempfile.gettempdir()
            return DiskFullError(
                f"disk full in {where} while downloading {what}: point --tmp-dir at a volume with "
                "more free space (the largest file must fit, times the files downloaded at once)"
            )
        if isinstance(exc, httpx2.HTTPError | OSError | ConnectionError | TimeoutError):
            return TransferError(
                f"cannot {action} {what} at {self.endpoint or DEFAULT_HF_ENDPOINT}: "
                f"{type(exc).__name__}: {exc}"
            )
        return exc


def _forwarding_bar(on_bytes: Callable[[int], None]):
    """A silent tqdm class for huggingface_hub that reports downloaded bytes to `on_bytes`."""
    from tqdm import tqdm

    class _Bar(tqdm):
        def __init__(self, *args, **kwargs):
            # Xet downloads open a second bar for compressed transfer bytes: count only one.
            self._forward = not str(kwargs.get("desc", "")).endswith("downloading bytes")
            kwargs["disable"] = True
            super().__init__(*args, **kwargs)

        def update(self, n=1):
            if n and self._forward:
                on_bytes(int(n))
            return super().update(n)

    return _Bar


# -- S3 ---------------------------------------------------------------------------------------
class S3Source:
    """Objects under s3://bucket/prefix, copied server-side to the destination."""

    def __init__(self, client, bucket: str, prefix: str, revision: str | None = None):
        self.client = client
        self.bucket = bucket
        self.prefix = prefix.strip("/")
        self.uri = f"s3://{bucket}/{self.prefix}" if self.prefix else f"s3://{bucket}"
        self.revision = revision

    def list_files(self) -> list[SourceFile]:
        from botocore.exceptions import BotoCoreError, ClientError

        from checkpoint.manifest import read_manifest

        start = f"{self.prefix}/" if self.prefix else ""
        files = []
        try:
            published = read_manifest(self.client, self.bucket, self.prefix)
            pages = self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=start
            )
            for page in pages:
                for obj in page.get("Contents", []):
                    key = obj["Key"]
                    if key.endswith("/"):
                        continue  # a "folder" marker
                    files.append(
                        SourceFile(
                            path=key[len(start) :],
                            size=obj["Size"],
                            source_id=f"s3-etag:{obj['ETag'].strip(chr(34))}",
                            location=key,
                        )
                    )
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            raise SourceError(f"cannot list --source {self.uri} ({code}): {exc}") from None
        except BotoCoreError as exc:
            raise TransferError(f"cannot list --source {self.uri}: {exc}") from None
        if published is not None:
            # Staged by hyperpod-dpd before: keep the checksums its source published.
            known = {f.path: f for f in published.files}
            files = [
                SourceFile(
                    path=f.path,
                    size=f.size,
                    source_id=f.source_id,
                    sha256=known[f.path].sha256 if f.path in known else None,
                    location=f.location,
                )
                for f in files
            ]
            if self.revision is None:
                self.revision = published.revision
        return files

    def published_crc64nvme(self, f: SourceFile) -> str | None:
        """The source object's full-object CRC64NVME, when S3 holds one."""
        head = self.client.head_object(Bucket=self.bucket, Key=f.location, ChecksumMode="ENABLED")
        value = head.get("ChecksumCRC64NVME")
        return value if value and "-" not in value else None
