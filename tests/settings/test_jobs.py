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
