"""The in-cluster Jobs (checkpoint staging, benchmark runs): the image they run and the index
their hash-pinned pip installs read, so that a private cluster without NAT can reach both."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field

from core.job_pods import index_environment
from core.versions import JOB_PYTHON_IMAGE
from settings.config.fields import ImageReference, SettingsModel


def _index_url(value: str) -> str:
    """An http(s) URL with a host and no credentials: a user:password in it would sit in the
    Job's spec and the stack's state in plaintext."""
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            "an http:// or https:// URL with a host, e.g. https://pypi.internal/simple"
        )
    if parts.username is not None or parts.password is not None:
        raise ValueError(
            "a URL without user:password (it would sit in the Job spec and the stack's state in "
            "plaintext): a mirror the VPC reaches without credentials"
        )
    return value


class JobsConfig(SettingsModel):
    image: ImageReference = Field(
        JOB_PYTHON_IMAGE,
        description="Image of the in-cluster Jobs (checkpoint staging, benchmark runs): CPython "
        "3.11, as the hash-pinned wheels they install are built for it. A private cluster "
        "points it at a registry in reach (an ECR pull-through cache of ECR Public). Pin it by "
        "digest as repo:tag@sha256:<64 hex> (`hyperpod-dpd fetch --stack <stack>` prints it).",
    )
    pip_index_url: Annotated[str, AfterValidator(_index_url)] | None = Field(
        None,
        description="PyPI mirror the Jobs' pip installs from (PIP_INDEX_URL), e.g. one the VPC "
        "reaches without NAT. Safe: every file is checked against the hash PyPI published. "
        "Default: PyPI.",
        examples=["https://pypi.internal.example/simple"],
    )

    def environment(self) -> list[dict[str, str]]:
        """The Jobs' container environment for these settings."""
        return index_environment(self.pip_index_url)
