"""Reading an OCI registry anonymously: the pull token a public registry hands out, and the digest
a tag names today.

The distribution API (OCI distribution spec v1.1, "Pulling manifests":
https://github.com/opencontainers/distribution-spec/blob/v1.1.0/spec.md#pulling-manifests):
`HEAD /v2/<name>/manifests/<reference>` answers with the manifest's digest in
`Docker-Content-Digest`, without its body; a registry that refuses HEAD (405) or leaves the header
out is asked with GET, and the digest is the sha256 of the bytes it returns, the manifest's own
(the spec, "Content Digests"). The Accept header lists the four manifest types a tag may name, the
multi-platform ones first (an OCI image index, a Docker manifest list): a node pulls by the digest
of what the tag names, so the digest recorded is that one, never a platform's manifest.

Public registries (public.ecr.aws, Docker Hub) answer 401 with a challenge `WWW-Authenticate:
Bearer realm="...",service="...",scope="..."`; an anonymous GET of the realm with the service and
scope returns a token (Docker's token authentication specification:
https://github.com/distribution/distribution/blob/v2.8.3/docs/spec/auth/token.md).
"""

from __future__ import annotations

import hashlib
import json
import re
import urllib.error
import urllib.parse
import urllib.request

from core.images import DOCKER_HUB, ImageRef

TIMEOUT = 30
SCHEME = "https"  # the tests' fake registry speaks http
MANIFEST_TYPES = (
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
)
DIGEST_HEADER = "Docker-Content-Digest"
# Docker Hub's API host: `docker.io` names the registry, registry-1.docker.io serves it (what
# the Docker Engine dials for docker.io, distribution/reference normalize.go and the engine's
# registry config); ImageRef.registry reads index.docker.io as docker.io.
API_HOSTS = {DOCKER_HUB: "registry-1.docker.io"}


class RegistryError(ValueError):
    """The registry could not say what the tag names: the message says why, for the user."""


def _open(request: urllib.request.Request) -> tuple[int, dict[str, str], bytes]:
    with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
        return response.status, dict(response.headers.items()), response.read()


def token(challenge: str, repository: str) -> str:
    """An anonymous pull token for a registry's `Bearer realm=..,service=..,scope=..` challenge.
    A challenge without `scope` is asked for `repository:<repository>:pull`: the client names the
    scope it needs (the token spec, "Requesting a Token"; Docker Hub leaves it out of a HEAD's
    challenge); a realm with a query of its own gets the parameters after an `&`."""
    fields = dict(re.findall(r'(\w+)="([^"]*)"', challenge))
    if not challenge.lower().startswith("bearer ") or "realm" not in fields:
        # A private registry (ECR's own asks for Basic credentials): fetch reads anonymously only.
        raise RegistryError(
            f"the registry asks for credentials ({challenge or 'no challenge'}): copy the digest "
            "from the registry (e.g. `aws ecr describe-images`)"
        )
    params = {k: v for k, v in fields.items() if k in ("service", "scope")}
    params.setdefault("scope", f"repository:{repository}:pull")
    realm = fields["realm"]
    joiner = "&" if urllib.parse.urlsplit(realm).query else ("" if realm.endswith("?") else "?")
    _, _, body = _open(urllib.request.Request(realm + joiner + urllib.parse.urlencode(params)))
    answer = json.loads(body)
    return answer.get("token") or answer["access_token"]


def manifest_url(ref: ImageRef) -> str:
    host = API_HOSTS.get(ref.registry, ref.registry)
    return f"{SCHEME}://{host}/v2/{ref.repository}/manifests/{ref.tag or 'latest'}"


def _ask(
    method: str, url: str, headers: dict[str, str], ref: ImageRef
) -> tuple[int, dict[str, str], bytes]:
    """One request; an anonymous token fetched and the request made again on a 401. A 401 with
    the token is Docker Hub's answer for a repository it does not have, or a private one."""
    try:
        return _open(urllib.request.Request(url, headers=headers, method=method))
    except urllib.error.HTTPError as exc:
        if exc.code != 401 or "Authorization" in headers:
            raise
        challenge = exc.headers.get("WWW-Authenticate", "")
    headers = {**headers, "Authorization": f"Bearer {token(challenge, ref.repository)}"}
    try:
        return _open(urllib.request.Request(url, headers=headers, method=method))
    except urllib.error.HTTPError as exc:
        if exc.code != 401:
            raise
        raise RegistryError(
            f"{ref.registry} refuses {ref.repository} to an anonymous pull token ({url}: 401): "
            "the repository does not exist or needs credentials; check the name, or copy the "
            "digest from the registry's console"
        ) from exc


def resolve_digest(ref: ImageRef) -> str:
    """`sha256:<hex>` of the manifest `ref`'s tag names now (HEAD, else GET)."""
    url = manifest_url(ref)
    headers = {"Accept": ", ".join(MANIFEST_TYPES)}
    try:
        try:
            _, answer, _ = _ask("HEAD", url, headers, ref)
            digest = _header(answer)
        except urllib.error.HTTPError as exc:
            if exc.code not in (405, 501):  # HEAD not allowed: GET below
                raise
            digest = None
        if digest is None:
            _, answer, body = _ask("GET", url, headers, ref)
            digest = "sha256:" + hashlib.sha256(body).hexdigest()
            if _header(answer) not in (None, digest):
                raise RegistryError(f"{url} sent bytes whose sha256 is not its {DIGEST_HEADER}")
    except RegistryError:
        raise
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            raise RegistryError(f"{ref.registry} has no tag {ref.tag or 'latest'} in "
                                f"{ref.repository} ({url}: 404)") from exc  # fmt: skip
        raise RegistryError(f"{url}: HTTP {exc.code} {exc.reason}") from exc
    except (OSError, ValueError, KeyError) as exc:  # unreachable, refused, timed out, bad token
        raise RegistryError(f"cannot reach {ref.registry} ({url}): {exc}") from exc
    return digest


def _header(headers: dict[str, str]) -> str | None:
    for name, value in headers.items():
        if name.lower() == DIGEST_HEADER.lower() and value.startswith("sha256:"):
            return value.strip()
    return None
