"""The in-cluster Jobs (checkpoint staging, benchmark runs): the image they run and the index
their hash-pinned pip installs read, so that a private cluster without NAT can reach both."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlsplit, urlunsplit

from pydantic import AfterValidator, Field

from core.job_image import JOB_PYTHON, judge_job_image
from core.job_pods import index_environment
from core.versions import JOB_PYTHON_IMAGE
from settings.config.fields import ImageReference, SettingsModel, Suggested


def _index_url(value: str) -> str:
    """An https URL with a host and no credentials: a user:password in it would sit in the
    Job's spec and the stack's state in plaintext.

    http:// is refused rather than passed on with --trusted-host: pip ignores an index on a
    plain-HTTP host it is not told to trust (pip's PipSession.is_secure_origin: "is not a trusted
    or secure host and is being ignored"), so the Job would fail to install at run time, and
    trusting the host would let pip take its plain-HTTP answers for anything it fetches there.
    The hashes keep the wheels honest, not the traffic private; private mirrors (CodeArtifact,
    Nexus, devpi, an ALB in front of one) serve HTTPS."""
    parts = urlsplit(value)
    if parts.scheme == "http" and parts.hostname:
        raise Suggested(
            "an https:// URL: pip ignores an http:// index whose host it is not told to trust "
            "(--trusted-host), so the Jobs' installs would fail at run time; serve the mirror "
            "over HTTPS (CodeArtifact, Nexus and devpi do)",
            urlunsplit(parts._replace(scheme="https")),
        )
    if parts.scheme != "https" or not parts.hostname:
        raise ValueError("an https:// URL with a host, e.g. https://pypi.internal/simple")
    if parts.username is not None or parts.password is not None:
        raise ValueError(
            "a URL without user:password (it would sit in the Job spec and the stack's state in "
            "plaintext): a mirror the VPC reaches without credentials"
        )
    return value


def _python_of_image(value: str) -> str:
    """Not an image whose name says it runs another Python than the locks' (core/job_image.py)."""
    judged = judge_job_image(value)
    if judged.verdict == "refused":
        raise Suggested(
            f"an image of CPython {JOB_PYTHON} on glibc, as the Jobs' locked wheels need: "
            f"{judged.why}",
            judged.suggestion,
        )
    return value


class JobsConfig(SettingsModel):
    image: Annotated[ImageReference, AfterValidator(_python_of_image)] = Field(
        JOB_PYTHON_IMAGE,
        description="Image of the in-cluster Jobs (checkpoint staging, benchmark runs): CPython "
        "3.11 on glibc, as the hash-pinned wheels they install are built for it (another "
        "Python, or Alpine's musl, is refused; an image whose name does not tell gets an "
        "advisory). A private cluster "
        "points it at a registry in reach (an ECR pull-through cache of ECR Public). Pin it by "
        "digest as repo:tag@sha256:<64 hex> (`hyperpod-dpd fetch --stack <stack>` prints it).",
    )
    pip_index_url: Annotated[str, AfterValidator(_index_url)] | None = Field(
        None,
        description="PyPI mirror the Jobs' pip installs from (PIP_INDEX_URL), e.g. one the VPC "
        "reaches without NAT: https:// (pip ignores a plain-HTTP index it is not told to "
        "trust). Safe: every file is checked against the hash PyPI published. Default: PyPI.",
        examples=["https://pypi.internal.example/simple"],
    )

    def environment(self) -> list[dict[str, str]]:
        """The Jobs' container environment for these settings."""
        return index_environment(self.pip_index_url)
