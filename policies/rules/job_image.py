"""hyperpod-dpd-job-image-python: the in-cluster Jobs run an image of the Python their locked
wheels are for (CPython 3.11 on glibc: core/job_image.py). The settings refuse an image whose name
says otherwise (`python:3.12-slim`, an Alpine tag); one whose name tells nothing (a private
mirror's `jobs:1.4`, a bare digest) is only the user's to know. Advisory: an image of another
Python passes every check and the Job fails at run time, when pip refuses the wheels; the finding
says what to make sure of, and how to use the stock image instead."""

from __future__ import annotations

from core.images import ImageRefError
from core.job_image import JOB_PYTHON, judge_job_image
from core.versions import JOB_PYTHON_IMAGE
from policies.rules import views
from policies.rules.base import Finding, Rule
from policies.rules.security.images_by_digest import JOBS_IMAGE_KEY, images


def check(resources, limits):
    for urn, key, image in images(resources):
        if key != JOBS_IMAGE_KEY or not isinstance(image, str) or not views.known(image):
            continue
        try:
            judged = judge_job_image(image)
        except ImageRefError:
            continue  # no image reference at all: the settings refuse it
        if judged.verdict == "fits":
            continue
        yield Finding(
            urn,
            f"{judged.why}. The Jobs pip-install wheels locked for CPython {JOB_PYTHON} on glibc "
            f"(manylinux, cp{JOB_PYTHON.replace('.', '')}), which pip refuses on another Python "
            f"or on musl: make sure {image} runs CPython {JOB_PYTHON} on glibc, or set "
            f"{key} to {JOB_PYTHON_IMAGE} (or your registry's mirror of it)",
        )


RULE = Rule(
    "hyperpod-dpd-job-image-python",
    "The Jobs' image runs the Python their locked wheels are for",
    "advisory",
    check,
)
