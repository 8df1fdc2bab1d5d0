"""Container image references: the one parser every reader of an image uses (the settings, the
image policies, `diff`, `verify`, `fetch`, the plan summary).

A reference is `name[:tag][@digest]` as distribution/reference defines it
(https://github.com/distribution/reference/blob/v0.6.0/reference.go, "Grammar"): the name is
`[domain/]path`, a domain being the first component when it holds a '.' or a ':' or is
`localhost`. A digest pins the image's bytes (the OCI image spec, descriptor.md "Digests",
https://github.com/opencontainers/image-spec/blob/v1.1.0/descriptor.md#digests); the tag beside
it is kept for readers and for the policies that know images by tag, and the runtime pulls by
the digest alone. This project accepts the digest `sha256:` + 64 lowercase hex digits only: the
form registries return in Docker-Content-Digest and `hyperpod-dpd fetch` records.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

_PATH_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*(?::[0-9]+)?"
_REFERENCE = re.compile(
    rf"(?P<name>(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*)"
    r"(?::(?P<tag>[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}))?"
    r"(?:@(?P<digest>[^@]*))?"
)
DIGEST_ALGORITHM = "sha256"
_SHA256_HEX = re.compile(r"[0-9a-f]{64}")
DOCKER_HUB = "docker.io"
LEGACY_DOCKER_HUB = "index.docker.io"  # Docker Hub's old name, the same registry
FORM = "[registry/]repository:tag[@sha256:<64 lowercase hex digits>] (or repository@sha256:...)"


class ImageRefError(ValueError):
    """A reference this project cannot use; `suggestion` is the nearest one it can (the digest
    lowercased, or the reference without a malformed digest), None when there is none."""

    def __init__(self, message: str, suggestion: str | None = None):
        super().__init__(message)
        self.suggestion = suggestion


@dataclass(frozen=True)
class ImageRef:
    name: str  # [registry/]repository, as written
    tag: str | None
    digest: str | None  # "sha256:<64 hex>"

    def __str__(self) -> str:
        return self.tagged + (f"@{self.digest}" if self.digest else "")

    @property
    def tagged(self) -> str:
        """`name:tag` without the digest: what the image policies' patterns know images by."""
        return self.name + (f":{self.tag}" if self.tag else "")

    @property
    def pinned(self) -> bool:
        return self.digest is not None

    def with_digest(self, digest: str) -> ImageRef:
        return ImageRef(self.name, self.tag, digest)

    def _domain_path(self) -> tuple[str | None, str]:
        """The domain as written (None when the name has none) and the path after it."""
        first, sep, rest = self.name.partition("/")
        domain = sep and (
            "." in first or ":" in first or first == "localhost" or first != first.lower()
        )
        return (first, rest) if domain else (None, self.name)

    @property
    def registry(self) -> str:
        """The registry host: `docker.io` for a name without a domain, and for the legacy
        `index.docker.io` (distribution/reference normalize.go, splitDockerDomain)."""
        domain, _ = self._domain_path()
        return DOCKER_HUB if domain in (None, LEGACY_DOCKER_HUB) else domain

    @property
    def repository(self) -> str:
        """The repository path inside the registry, Docker Hub's official images under
        `library/` (`python` is docker.io/library/python)."""
        _, path = self._domain_path()
        if self.registry == DOCKER_HUB and "/" not in path:
            return f"library/{path}"
        return path

    @property
    def familiar(self) -> str:
        """The name as Docker shows it, one spelling per image: Docker Hub's domain dropped
        (`docker.io/`, `index.docker.io/`) and `library/` for an official image
        (distribution/reference normalize.go, FamiliarName:
        https://github.com/distribution/reference/blob/v0.6.0/normalize.go). What a reference
        is compared with a known name by: `docker.io/lmcache/vllm-openai` is lmcache/vllm-openai,
        `index.docker.io/library/python` is python."""
        if self.registry != DOCKER_HUB:
            return self.name
        official = self.repository.removeprefix("library/")
        return official if "/" not in official else self.repository

    @property
    def familiar_tagged(self) -> str:
        """`familiar:tag` without the digest: what the image policies compare."""
        return self.familiar + (f":{self.tag}" if self.tag else "")


def parse_image(text: str) -> ImageRef:
    """The reference `text` names; ImageRefError says what is wrong with it and what works."""
    if not isinstance(text, str):
        raise ImageRefError(f"an image reference {FORM}")
    m = _REFERENCE.fullmatch(text)
    if m is None:
        name = text.partition("@")[0]
        if "@" in text and (not name or name.startswith(f"{DIGEST_ALGORITHM}:")):
            raise ImageRefError(f"an image reference with its repository before the digest, {FORM}")
        raise ImageRefError(
            f"an image reference {FORM}, e.g. public.ecr.aws/docker/library/python:3.11-slim "
            "(lowercase repository, no spaces)",
            _lowercased(text),
        )
    ref = ImageRef(m["name"], m["tag"], m["digest"])
    if ref.name == DIGEST_ALGORITHM:  # `sha256:<hex>`: a digest where the repository goes
        raise ImageRefError(f"an image reference with its repository before the digest, {FORM}")
    if ref.digest is not None:
        _check_digest(ref)
    return ref


def _lowercased(text: str) -> str | None:
    lowered = text.strip().lower()
    return lowered if lowered != text and _REFERENCE.fullmatch(lowered) else None


def _check_digest(ref: ImageRef) -> None:
    assert ref.digest is not None
    algorithm, _, hex_digits = ref.digest.partition(":")
    without = ImageRef(ref.name, ref.tag, None)
    # The reference without the digest still runs, by tag: the fix keeps what can be kept.
    fallback = str(without) if ref.tag else None
    if algorithm != DIGEST_ALGORITHM:
        raise ImageRefError(
            f"a {DIGEST_ALGORITHM} digest ({ref.tagged}@sha256:<64 lowercase hex digits>, what "
            f"registries return and `hyperpod-dpd fetch` records), not {algorithm or 'none'}",
            fallback,
        )
    if _SHA256_HEX.fullmatch(hex_digits):
        return
    if _SHA256_HEX.fullmatch(hex_digits.lower()):
        raise ImageRefError(
            "a digest in lowercase hex (sha256:<64 lowercase hex digits>)",
            str(ref.with_digest(f"{algorithm}:{hex_digits.lower()}")),
        )
    raise ImageRefError(
        f"a digest sha256:<64 lowercase hex digits> (this one has {len(hex_digits)} characters"
        f"{'' if re.fullmatch('[0-9a-fA-F]*', hex_digits) else ', not all hex'}): copy it whole "
        "from `hyperpod-dpd fetch` or the registry",
        fallback,
    )


def tag_reference(text: str) -> str:
    """`text` without its digest, by its familiar name (`repo:tag`, `docker.io/` and `library/`
    dropped), for the checks that know images by tag; a reference the parser refuses is returned
    as is (the settings refused it already)."""
    try:
        return parse_image(text).familiar_tagged
    except ImageRefError:
        return text


def is_pinned(text: str) -> bool:
    try:
        return parse_image(text).pinned
    except ImageRefError:
        return False


def pin_command(key: str, image: str, stack: str) -> str:
    """The command that sets the image key `key` (e.g. 'hyperpod-dpd:endpoint.image') to `image`
    in Pulumi.<stack>.yaml, naming the stack (without `--stack` it would act on whichever stack
    is selected): `pulumi config set --path` edits the nested key in the stack file in
    place (https://www.pulumi.com/docs/iac/cli/commands/pulumi_config_set/), where a pasted
    `hyperpod-dpd:endpoint.image: ...` line would be a new top-level key. Both words are single-
    quoted for the shell (a key or a reference the settings take holds no quote)."""
    return f"pulumi config set --stack {shlex.quote(stack)} --path '{key}' '{image}'"
