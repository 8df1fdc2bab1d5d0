"""A small Hugging Face Hub on 127.0.0.1 speaking the routes and headers huggingface_hub 2.4.0
uses (read from its source: hf_api.model_info, file_download.get_hf_file_metadata/http_get,
utils/_http.hf_raise_for_status):

  GET  /api/models/{org}/{name}[/revision/{rev}][?blobs=true]   model info (+ files metadata)
  HEAD /{org}/{name}/resolve/{rev}/{path}   X-Repo-Commit, ETag, X-Linked-Etag/-Size (LFS),
                                            Content-Length
  GET  /{org}/{name}/resolve/{rev}/{path}   the bytes (Range: bytes=N- for resumes)

Errors carry X-Error-Code (RepoNotFound, RevisionNotFound, EntryNotFound, GatedRepo) and
X-Error-Message the way the Hub sends them, so huggingface_hub raises its real exceptions.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

from tests.support.quiet_http import QuietHTTPServer


@dataclass
class HubFile:
    data: bytes
    lfs: bool

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def blob_id(self) -> str:
        if self.lfs:  # the git blob of an LFS file is its pointer
            pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{self.sha256}\n"
            pointer += f"size {len(self.data)}\n"
            return _git_sha1(pointer.encode())
        return _git_sha1(self.data)


def _git_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


@dataclass
class HubRepo:
    commits: dict[str, dict[str, HubFile]]  # sha -> path -> file
    main: str
    gated: bool = False
    granted_tokens: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class HubRequest:
    method: str
    path: str
    authorized: bool
    status: int


class FakeHub:
    def __init__(self):
        self.repos: dict[str, HubRepo] = {}
        self.valid_tokens: set[str] = set()
        self.corrupt: dict[tuple[str, str], int] = {}  # (repo, path) -> GETs to serve flipped
        self.requests: list[HubRequest] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> FakeHub:
        hub = self

        class Handler(_Handler):
            pass

        Handler.hub = hub
        self._server = QuietHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._thread.join()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def mark(self) -> int:
        with self._lock:
            return len(self.requests)

    def since(self, mark: int) -> list[HubRequest]:
        with self._lock:
            return list(self.requests[mark:])

    def log(self, request: HubRequest) -> None:
        with self._lock:
            self.requests.append(request)


_API = re.compile(r"^/api/models/(?P<repo>[^/]+/[^/]+)(?:/revision/(?P<rev>[^/]+))?$")
_RESOLVE = re.compile(r"^/(?P<repo>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<path>.+)$")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    hub: FakeHub

    def log_message(self, format, *args):  # keep test output clean
        pass

    def do_GET(self):
        self._route(head=False)

    def do_HEAD(self):
        self._route(head=True)

    # -- helpers ------------------------------------------------------------------------------
    def _send(self, status: int, body: bytes = b"", headers: dict | None = None, head=False):
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if "Content-Length" not in (headers or {}):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head and body:
            self.wfile.write(body)
        self.hub.log(HubRequest(self.command, self.path, "authorization" in self.headers, status))

    def _error(self, status: int, code: str | None, message: str, head=False):
        headers = {"Content-Type": "application/json", "X-Error-Message": message}
        if code:
            headers["X-Error-Code"] = code
        self._send(status, json.dumps({"error": message}).encode(), headers, head)

    def _token(self) -> str | None:
        auth = self.headers.get("authorization", "")
        return auth[len("Bearer ") :] if auth.startswith("Bearer ") else None

    def _revision(self, repo: HubRepo, rev: str) -> str | None:
        rev = unquote(rev)
        if rev == "main":
            return repo.main
        return rev if rev in repo.commits else None

    # -- routes -------------------------------------------------------------------------------
    def _route(self, head: bool):
        url = urlsplit(self.path)
        path = unquote(url.path)
        if m := _API.match(path):
            return self._model_info(m["repo"], m["rev"] or "main", parse_qs(url.query), head)
        if m := _RESOLVE.match(path):
            return self._resolve(m["repo"], m["rev"], m["path"], head)
        return self._error(404, None, "Not Found", head)

    def _model_info(self, repo_id: str, rev: str, query: dict, head: bool):
        repo = self.hub.repos.get(repo_id)
        if repo is None:  # the Hub answers 401 for unknown repos to anonymous users
            return self._error(401, "RepoNotFound", "Repository not found", head)
        sha = self._revision(repo, rev)
        if sha is None:
            return self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}", head)
        blobs = query.get("blobs", ["false"])[0].lower() == "true"
        siblings = []
        for path, f in sorted(repo.commits[sha].items()):
            entry: dict = {"rfilename": path}
            if blobs:
                entry.update(size=len(f.data), blobId=f.blob_id)
                if f.lfs:
                    entry["lfs"] = {"size": len(f.data), "sha256": f.sha256, "pointerSize": 134}
            siblings.append(entry)
        doc = {
            "_id": "0" * 24,
            "id": repo_id,
            "modelId": repo_id,
            "sha": sha,
            "private": False,
            "gated": "manual" if repo.gated else False,
            "disabled": False,
            "siblings": siblings,
        }
        body = json.dumps(doc).encode()
        self._send(200, body, {"Content-Type": "application/json"}, head)

    def _resolve(self, repo_id: str, rev: str, path: str, head: bool):
        repo = self.hub.repos.get(repo_id)
        if repo is None:
            return self._error(401, "RepoNotFound", "Repository not found", head)
        token = self._token()
        if token is not None and token not in self.hub.valid_tokens:
            return self._error(401, None, "Invalid credentials in Authorization header", head)
        if repo.gated and token is None:
            return self._error(
                401,
                "GatedRepo",
                f"Access to model {repo_id} is restricted. You must have access to it and be "
                "authenticated to access it. Please log in.",
                head,
            )
        if repo.gated and token not in repo.granted_tokens:
            return self._error(
                403,
                "GatedRepo",
                f"Access to model {repo_id} is restricted and you are not in the authorized list.",
                head,
            )
        sha = self._revision(repo, rev)
        if sha is None:
            return self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}", head)
        f = repo.commits[sha].get(path)
        if f is None:
            return self._error(404, "EntryNotFound", f"{path} does not exist", head)
        headers = {
            "X-Repo-Commit": sha,
            "ETag": f'"{f.sha256 if f.lfs else f.blob_id}"',
            "Accept-Ranges": "bytes",
            "Content-Type": "application/octet-stream",
        }
        if f.lfs:
            headers["X-Linked-Etag"] = f'"{f.sha256}"'
            headers["X-Linked-Size"] = str(len(f.data))
        data = f.data
        if not head:
            with self.hub._lock:
                left = self.hub.corrupt.get((repo_id, path), 0)
                if left:
                    self.hub.corrupt[(repo_id, path)] = left - 1
            if left:
                data = bytes([data[0] ^ 0xFF]) + data[1:]
        start = 0
        if (rng := self.headers.get("range")) and (m := re.match(r"bytes=(\d+)-$", rng)):
            start = int(m[1])
        if start:
            headers["Content-Range"] = f"bytes {start}-{len(data) - 1}/{len(data)}"
            headers["Content-Length"] = str(len(data) - start)
            return self._send(206, data[start:], headers, head)
        headers["Content-Length"] = str(len(data))
        self._send(200, data, headers, head)
