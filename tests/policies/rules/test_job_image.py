"""hyperpod-dpd-job-image-python (policies/rules/job_image.py): a Jobs image whose name tells
nothing of its Python (a private mirror, a bare digest) is named with what to make sure of; the
stock image and a mirror of it pass; the settings already refuse names of another Python."""

from __future__ import annotations

import pytest

from core.versions import JOB_PYTHON_IMAGE
from tests.policies.conftest import named
from tests.policies.rules.helpers import RULES, findings
from tests.support.pinned_images import TEST_DIGEST

RULE = "hyperpod-dpd-job-image-python"


def _job_image(views) -> dict:
    (container,) = named(views, "checkpoint-job").props["spec"]["template"]["spec"]["containers"]
    return container


@pytest.mark.parametrize(
    "image",
    ["111122223333.dkr.ecr.us-east-2.amazonaws.com/jobs:1.4", f"python@{TEST_DIGEST}"],
)
def test_an_image_whose_python_its_name_does_not_tell_is_an_advisory(dev, image):
    _job_image(dev)["image"] = image
    [(urn, message)] = findings(RULE, dev)
    assert urn == named(dev, "checkpoint-job").urn
    assert f"make sure {image} runs CPython 3.11 on glibc" in message
    assert f"or set hyperpod-dpd:jobs.image to {JOB_PYTHON_IMAGE}" in message
    assert RULES[RULE].enforcement == "advisory"


@pytest.mark.parametrize(
    "image",
    [
        f"{JOB_PYTHON_IMAGE}@{TEST_DIGEST}",
        "111122223333.dkr.ecr.us-east-2.amazonaws.com/ecr-public/docker/library/python:3.11",
    ],
)
def test_the_stock_image_and_its_mirrors_pass(dev, image):
    _job_image(dev)["image"] = image
    assert findings(RULE, dev) == []
