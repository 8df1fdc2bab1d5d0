"""core/job_image.py: which Python a Jobs image runs, read from its name, and the Python the
Jobs' locks are resolved for, which is the default image's."""

from __future__ import annotations

import pytest

from core.job_image import JOB_PYTHON, judge_job_image
from core.versions import JOB_PYTHON_IMAGE
from tests.conftest import ROOT


def test_the_locks_are_resolved_for_the_default_images_python():
    assert JOB_PYTHON == "3.11" and judge_job_image(JOB_PYTHON_IMAGE).verdict == "fits"
    for lock in ("staging", "benchmark", "loadtest"):
        head = (ROOT / f"requirements-job-{lock}.txt").read_text()[:600]
        assert f"Resolved on PyPI for CPython {JOB_PYTHON}, manylinux x86_64 wheels" in head


@pytest.mark.parametrize(
    ("image", "verdict"),
    [
        ("python:3.11-slim-bookworm", "fits"),
        ("index.docker.io/library/python:3.11.10", "fits"),
        ("123456789012.dkr.ecr.eu-west-1.amazonaws.com/docker-hub/library/python:3.11", "fits"),
        ("python:3.10", "refused"),
        ("python:3.12-slim-bookworm", "refused"),
        ("python:3", "refused"),
        ("python:slim", "refused"),
        ("python:3.11-alpine", "refused"),
        ("python:3.11-windowsservercore-ltsc2022", "refused"),
        ("library/alpine:3.20", "refused"),
        ("pypy:3.10", "refused"),
        ("mirror.internal/jobs:cp312-glibc", "refused"),
        ("mirror.internal/jobs:1.4", "unknown"),
        ("mirror.internal/jobs:py3.11", "unknown"),  # a private build: its libc untold
        ("python@sha256:" + "0" * 64, "unknown"),
    ],
)  # fmt: skip
def test_an_image_is_judged_by_what_its_name_says(image, verdict):
    judged = judge_job_image(image)
    assert judged.verdict == verdict, judged
    if verdict == "refused":
        assert judge_job_image(judged.suggestion).verdict == "fits"
