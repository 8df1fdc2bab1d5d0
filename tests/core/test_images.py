"""Image references: the one parser the settings, policies, diff, verify and fetch read images
with (core/images.py)."""

from __future__ import annotations

import pytest

from core.images import ImageRefError, is_pinned, parse_image, tag_reference
from core.versions import DLC_VLLM_IMAGE, JOB_PYTHON_IMAGE

DIGEST = "sha256:" + "0123456789abcdef" * 4


@pytest.mark.parametrize(
    ("text", "name", "tag", "digest", "registry", "repository"),
    [
        (DLC_VLLM_IMAGE, "public.ecr.aws/deep-learning-containers/vllm",
         "server-hyperpod-cuda-v1.1", None, "public.ecr.aws", "deep-learning-containers/vllm"),
        (f"{JOB_PYTHON_IMAGE}@{DIGEST}", "public.ecr.aws/docker/library/python",
         "3.11-slim-bookworm", DIGEST, "public.ecr.aws", "docker/library/python"),
        (f"lmcache/vllm-openai@{DIGEST}", "lmcache/vllm-openai", None, DIGEST, "docker.io",
         "lmcache/vllm-openai"),
        ("python:3.11", "python", "3.11", None, "docker.io", "library/python"),
        ("docker.io/curlimages/curl:8.11.1", "docker.io/curlimages/curl", "8.11.1", None,
         "docker.io", "curlimages/curl"),
        (f"localhost:5000/team/vllm:v1@{DIGEST}", "localhost:5000/team/vllm", "v1", DIGEST,
         "localhost:5000", "team/vllm"),
        ("img", "img", None, None, "docker.io", "library/img"),
        ("Registry/team/x:1", "Registry/team/x", "1", None, "Registry", "team/x"),
        ("index.docker.io/python:3.11", "index.docker.io/python", "3.11", None, "docker.io",
         "library/python"),
        ("index.docker.io/lmcache/vllm-openai:v0.4.3", "index.docker.io/lmcache/vllm-openai",
         "v0.4.3", None, "docker.io", "lmcache/vllm-openai"),
    ],
)  # fmt: skip
def test_a_reference_reads_as_name_tag_and_digest(text, name, tag, digest, registry, repository):
    ref = parse_image(text)
    assert (ref.name, ref.tag, ref.digest) == (name, tag, digest)
    assert (ref.registry, ref.repository) == (registry, repository)
    assert str(ref) == text and ref.pinned == (digest is not None)


def test_the_tag_beside_a_digest_is_what_the_tag_checks_read():
    assert tag_reference(f"{DLC_VLLM_IMAGE}@{DIGEST}") == DLC_VLLM_IMAGE
    assert tag_reference("not a reference") == "not a reference"
    assert is_pinned(f"{DLC_VLLM_IMAGE}@{DIGEST}") and not is_pinned(DLC_VLLM_IMAGE)
    assert str(parse_image(DLC_VLLM_IMAGE).with_digest(DIGEST)) == f"{DLC_VLLM_IMAGE}@{DIGEST}"


@pytest.mark.parametrize(
    ("text", "familiar"),
    [
        ("docker.io/lmcache/vllm-openai:v0.4.4", "lmcache/vllm-openai:v0.4.4"),
        ("index.docker.io/lmcache/vllm-openai:v0.4.4", "lmcache/vllm-openai:v0.4.4"),
        (f"docker.io/library/python:3.11@{DIGEST}", "python:3.11"),
        ("index.docker.io/python:3.11", "python:3.11"),
        ("library/python:3.11", "python:3.11"),
        ("docker.io/library/team/x:1", "library/team/x:1"),  # not an official image
        (JOB_PYTHON_IMAGE, JOB_PYTHON_IMAGE),  # another registry's library/ stays
        ("localhost:5000/python:3.11", "localhost:5000/python:3.11"),
    ],
)
def test_docker_hub_names_compare_by_their_familiar_name(text, familiar):
    """distribution/reference's FamiliarName: one spelling per Docker Hub image."""
    assert tag_reference(text) == familiar


@pytest.mark.parametrize(
    ("text", "says", "suggestion"),
    [
        (f"python:3.11@{DIGEST[:-1]}", "this one has 63 characters", "python:3.11"),
        (f"python:3.11@{DIGEST.upper().replace('SHA256', 'sha256')}", "lowercase hex",
         f"python:3.11@{DIGEST}"),
        (f"python:3.11@sha512:{'ab' * 64}", "not sha512", "python:3.11"),
        (f"@{DIGEST}", "repository before the digest", None),
        (DIGEST, "repository before the digest", None),
        (f"python@{DIGEST[:-4]}zzzz", "not all hex", None),
        ("python 3.11", "no spaces", None),
        ("Python:3.11", "lowercase repository", "python:3.11"),
    ],
)  # fmt: skip
def test_a_malformed_reference_says_what_is_wrong_and_the_nearest_that_works(
    text, says, suggestion
):
    with pytest.raises(ImageRefError, match=says) as info:
        parse_image(text)
    assert info.value.suggestion == suggestion
    if suggestion is not None:
        parse_image(suggestion)  # the suggestion itself parses
