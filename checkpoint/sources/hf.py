"""A model repository on the Hugging Face Hub at one commit, as a source.

Files are downloaded one by one into the upload's work directory (`stages`); the upload checks
each against the SHA-256 or git blob id listed here, and deletes it once uploaded.
huggingface_hub is imported only when a Hub source is used.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from checkpoint.errors import DiskFullError, SourceError, TransferError, UsageError
from checkpoint.sources.base import SourceFile

COMMIT_SHA = re.compile(r"^[0-9a-f]{40}$")
DEFAULT_HF_ENDPOINT = "https://huggingface.co"
HF_TOKEN_CONFIG = "pulumi config set --stack <stack> --secret hyperpod-dpd:hfToken <token>"


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


def hub_token(environ: Mapping[str, str] = os.environ) -> str | None:
    """The Hugging Face token: HF_TOKEN, else the file HF_TOKEN_PATH names (the staging Job
    mounts its Secret there: specs/staging.py), the two places huggingface_hub reads it from
    (huggingface_hub src/huggingface_hub/utils/_auth.py get_token). Read here, at call time:
    huggingface_hub reads HF_TOKEN_PATH once, when imported."""
    token = environ.get("HF_TOKEN")
    if token:
        return token.strip()
    path = environ.get("HF_TOKEN_PATH")
    if not path:
        return None
    try:
        return Path(path).read_text().strip() or None
    except FileNotFoundError:
        return None


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
