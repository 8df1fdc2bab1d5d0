"""hyperpod-dpd:jobs: what a private cluster needs to stage and benchmark without NAT."""

from __future__ import annotations

import pytest

from core.versions import JOB_PYTHON_IMAGE
from settings import parse_settings
from tests.conftest import edit
from tests.settings.problems import followed, only_problem

KEY = "hyperpod-dpd:jobs"


def test_by_default_the_jobs_use_pypi_and_the_pinned_image(dev_raw):
    jobs = parse_settings(dev_raw).jobs
    assert jobs.image == JOB_PYTHON_IMAGE and jobs.pip_index_url is None
    assert jobs.environment() == []


def test_a_mirror_and_an_image_in_reach(dev_raw):
    mirror = "https://nexus.internal:8443/repository/pypi/simple"
    image = "111122223333.dkr.ecr.us-east-2.amazonaws.com/ecr-public/docker/library/python:3.11"
    edit(dev_raw, KEY, {"image": image, "pipIndexUrl": mirror})
    jobs = parse_settings(dev_raw).jobs
    assert jobs.image == image
    assert jobs.environment() == [{"name": "PIP_INDEX_URL", "value": mirror}]


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("https://aws:secret@domain.d.codeartifact.us-east-2.amazonaws.com/pypi/x/simple/",
         "a URL without user:password"),
        ("ftp://mirror.internal/simple", "an https:// URL with a host"),
        ("mirror.internal/simple", "an https:// URL with a host"),
    ],
)  # fmt: skip
def test_an_index_url_pip_cannot_use_safely_is_refused(dev_raw, url, allowed):
    edit(dev_raw, KEY, {"pipIndexUrl": url})
    message = only_problem(dev_raw)
    assert message.startswith(f"{KEY}.pipIndexUrl: got ") and f"allowed: {allowed}" in message


def test_an_image_reference_with_spaces_is_refused(dev_raw):
    edit(dev_raw, KEY, {"image": "python 3.11"})
    assert only_problem(dev_raw).startswith(f"{KEY}.image: got 'python 3.11'; allowed: an image")


DIGEST = "sha256:" + "ab12" * 16


def test_an_image_pinned_by_digest_keeps_its_tag_beside_it(dev_raw):
    pinned = f"{JOB_PYTHON_IMAGE}@{DIGEST}"
    edit(dev_raw, KEY, {"image": pinned})
    assert parse_settings(dev_raw).jobs.image == pinned


@pytest.mark.parametrize(
    ("image", "allowed", "fixed"),
    [
        (f"{JOB_PYTHON_IMAGE}@{DIGEST[:-1]}", "this one has 63 characters", JOB_PYTHON_IMAGE),
        (f"{JOB_PYTHON_IMAGE}@{DIGEST.upper().replace('SHA', 'sha')}", "lowercase hex",
         f"{JOB_PYTHON_IMAGE}@{DIGEST}"),
        (f"{JOB_PYTHON_IMAGE}@sha512:{'ab' * 64}", "not sha512", JOB_PYTHON_IMAGE),
        (f"@{DIGEST}", "repository before the digest", JOB_PYTHON_IMAGE),
    ],
)  # fmt: skip
def test_a_malformed_digest_is_refused_with_the_nearest_reference_that_works(
    dev_raw, image, allowed, fixed
):
    edit(dev_raw, KEY, {"image": image})
    message = only_problem(dev_raw)
    assert message.startswith(f"{KEY}.image: got '{image[:20]}") and allowed in message
    assert parse_settings(followed(dev_raw, message)).jobs.image == fixed


@pytest.mark.parametrize(
    ("image", "said", "fixed"),
    [
        ("python:3.12-slim", "tag 3.12-slim is Python 3.12", "python:3.11-slim-bookworm"),
        ("public.ecr.aws/docker/library/python:3.13", "is Python 3.13",
         "public.ecr.aws/docker/library/python:3.11-slim-bookworm"),
        ("python:3-slim", "follows the newest Python 3 release", "python:3.11-slim-bookworm"),
        ("python:latest", "follows the newest Python release", "python:3.11-slim-bookworm"),
        ("python:3.11-alpine", "musl (Alpine)", "python:3.11-slim-bookworm"),
        ("python:3.11-alpine3.20@" + DIGEST, "musl (Alpine)", "python:3.11-slim-bookworm"),
        ("alpine:3.20", "musl (Alpine)", JOB_PYTHON_IMAGE),
        ("pypy:3.10-slim", "pypy, not CPython", JOB_PYTHON_IMAGE),
        ("registry.internal/jobs:py3.12", "names Python 3.12", JOB_PYTHON_IMAGE),
    ],
)  # fmt: skip
def test_an_image_of_another_python_or_on_musl_is_refused(dev_raw, image, said, fixed):
    """The locked wheels are cp311 manylinux ones: pip refuses them there at run time."""
    edit(dev_raw, KEY, {"image": image})
    message = only_problem(dev_raw)
    assert message.startswith(f"{KEY}.image: got ")
    assert "allowed: an image of CPython 3.11 on glibc, as the Jobs' locked wheels need" in message
    assert said in message
    assert parse_settings(followed(dev_raw, message)).jobs.image == fixed


@pytest.mark.parametrize(
    "image",
    [
        "python:3.11",
        "python:3.11.9-bookworm",
        f"public.ecr.aws/docker/library/python:3.11-slim-bookworm@{DIGEST}",
        # Names that tell nothing of their Python: taken, with the plan's advisory
        # (tests/policies/rules/test_job_image.py).
        "111122223333.dkr.ecr.us-east-2.amazonaws.com/jobs:1.4",
        f"python@{DIGEST}",
    ],
)
def test_an_image_of_cpython_3_11_or_one_whose_name_tells_nothing_is_taken(dev_raw, image):
    edit(dev_raw, KEY, {"image": image})
    assert parse_settings(dev_raw).jobs.image == image


def test_a_plain_http_index_is_refused_with_its_https_form(dev_raw):
    """pip ignores an http:// index whose host it is not told to trust."""
    edit(dev_raw, KEY, {"pipIndexUrl": "http://nexus.internal:8081/repository/pypi/simple"})
    message = only_problem(dev_raw)
    assert message.startswith(f"{KEY}.pipIndexUrl: got 'http://nexus.internal:8081/")
    assert "allowed: an https:// URL: pip ignores an http:// index" in message
    fixed = parse_settings(followed(dev_raw, message)).jobs.pip_index_url
    assert fixed == "https://nexus.internal:8081/repository/pypi/simple"
