"""Which Python an image for the in-cluster Jobs runs, as far as its name tells.

The Jobs pip-install hash-pinned wheels locked for CPython 3.11 on glibc (scripts/
lock_job_requirements.py: `cp311` and `manylinux_*` wheel tags, PEP 425 and PEP 600). pip
installs a wheel only when one of its tags is one the running interpreter supports, so those
files are refused on another CPython minor (cp312 ...), on another Python (PyPy: pp3xx tags) and
on musl (Alpine: PEP 656 gives it musllinux tags of its own) and the Job fails at run time, after
its node and pull. An image whose name says so (`python:3.12-slim`, `python:3-alpine`,
`python:latest`, `...:...-alpine`) is refused by the settings; one whose name tells nothing (a
private mirror's `jobs:1.4`, a bare digest) is the user's to know, and the plan says so in an
advisory (policies/rules/job_image.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from core.images import parse_image
from core.versions import JOB_PYTHON_IMAGE

# The Python the Jobs' locks are made for: the minor of the default image's tag (3.11).
_DEFAULT = parse_image(JOB_PYTHON_IMAGE)
JOB_PYTHON = re.match(r"\d+\.\d+", _DEFAULT.tag or "").group(0)  # type: ignore[union-attr]
OFFICIAL_PYTHON = "python"  # Docker's official image, and its mirrors (.../library/python)
OTHER_PYTHONS = ("pypy",)
_MUSL = re.compile(r"(^|[-_.])(alpine|musl)")
_WINDOWS = re.compile(r"windowsservercore|nanoserver")
# A Python version written in a tag: 3.12, py3.12, python3.12, py312, cp312.
_VERSION_IN_TAG = re.compile(r"(?:^|[-_.])(?:py|python|cp)-?(3)\.?(\d{1,2})(?![\d])")


@dataclass(frozen=True)
class JobImagePython:
    verdict: Literal["fits", "refused", "unknown"]
    why: str  # for refused and unknown: what the name says (or does not)
    suggestion: str | None = None  # for refused: the nearest image that fits


def judge_job_image(text: str) -> JobImagePython:
    """What `text` (a valid image reference) says of its Python."""
    ref = parse_image(text)
    repo = ref.repository.rsplit("/", 1)[-1]
    tag = ref.tag or ""
    same_repo = f"{ref.name}:{_DEFAULT.tag}"
    if repo == "alpine" or _MUSL.search(tag):
        return JobImagePython(
            "refused",
            "an image on musl (Alpine): the locked wheels are manylinux (glibc) ones, and musl "
            "takes only musllinux wheels (PEP 656)",
            same_repo if repo == OFFICIAL_PYTHON else JOB_PYTHON_IMAGE,
        )
    if _WINDOWS.search(tag):
        return JobImagePython(
            "refused", "a Windows image: the Jobs' nodes run Linux", JOB_PYTHON_IMAGE
        )
    if repo in OTHER_PYTHONS:
        return JobImagePython(
            "refused",
            f"{repo}, not CPython: the locked wheels are cp{JOB_PYTHON.replace('.', '')} ones",
            JOB_PYTHON_IMAGE,
        )
    if repo == OFFICIAL_PYTHON:
        if not tag:
            return JobImagePython("unknown", f"{text} names no tag, so no Python version")
        version = re.match(r"(\d+)(?:\.(\d+))?", tag)
        if version and version.group(2) is not None:
            if f"{version.group(1)}.{version.group(2)}" == JOB_PYTHON:
                return JobImagePython("fits", "")
            written = f"is Python {version.group(1)}.{version.group(2)}"
        else:  # python:3, python:latest, python:slim: whatever minor is newest today
            written = f"follows the newest Python{' 3' if version else ''} release"
        return JobImagePython(
            "refused",
            f"tag {tag} {written}, not CPython {JOB_PYTHON}: the locked wheels are "
            f"cp{JOB_PYTHON.replace('.', '')} ones (PEP 425), which pip refuses on another minor",
            same_repo,
        )
    written = _VERSION_IN_TAG.search(tag)
    if written and f"{written.group(1)}.{written.group(2)}" != JOB_PYTHON:
        return JobImagePython(
            "refused",
            f"tag {tag} names Python {written.group(1)}.{written.group(2)}, not CPython "
            f"{JOB_PYTHON}: the locked wheels are cp{JOB_PYTHON.replace('.', '')} ones (PEP 425)",
            JOB_PYTHON_IMAGE,
        )
    return JobImagePython(
        "unknown",
        f"{text} is no image whose Python this project can read from its name (Docker's "
        f"official python image, or a mirror of it, tagged {JOB_PYTHON}-...)",
    )
