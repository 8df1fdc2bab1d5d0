"""A real local S3 endpoint for the staging tests: moto's ThreadedMotoServer on 127.0.0.1, its
WSGI app wrapped to record every request (to count PUTs) and to inject faults that S3 serves
in the field (503 SlowDown, 500, 403 AccessDenied, a body cut short in transit)."""

from __future__ import annotations

import base64
import hashlib
import io
import re
import threading
from dataclasses import dataclass
from typing import Self
from urllib.parse import parse_qs, unquote

from moto.moto_server.threaded_moto_server import ThreadedMotoServer
from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.serving import make_server

# Requests that write object data (what "zero PUTs" counts).
WRITES = {
    "PutObject",
    "CopyObject",
    "UploadPart",
    "UploadPartCopy",
    "CreateMultipartUpload",
    "CompleteMultipartUpload",
}


@dataclass(frozen=True)
class Request:
    seq: int
    op: str
    bucket: str
    key: str
    status: int
    part: int | None = None  # UploadPart's partNumber
    app: str = ""  # the sender's app id in its User-Agent (AWS_SDK_UA_APP_ID: "app/<id>")
    upload: str = ""  # the uploadId a multipart request names (its first 8 characters)


@dataclass(frozen=True)
class Body:
    """An object-writing request's body as received, next to what its headers claim."""

    op: str
    key: str
    content_sha256: str | None  # the x-amz-content-sha256 header (the signed payload hash)
    checksum_crc64nvme: str | None  # the x-amz-checksum-crc64nvme header
    sha256: str  # of the bytes received
    crc64nvme: str


@dataclass
class Fault:
    """Serve `status`/`code` (or cut the body in half) to the next `times` matching requests."""

    op: str
    bucket: str
    key: str | None = None  # None: any key
    times: int = 1
    status: int = 503
    code: str = "SlowDown"
    truncate: bool = False

    def matches(self, op: str, bucket: str, key: str) -> bool:
        return (
            self.times > 0 and op == self.op and bucket == self.bucket and self.key in (None, key)
        )


def operation(method: str, key: str, query: dict, headers: dict) -> str:
    copy = "HTTP_X_AMZ_COPY_SOURCE" in headers
    if method == "PUT" and key:
        if "partNumber" in query:
            return "UploadPartCopy" if copy else "UploadPart"
        return "CopyObject" if copy else "PutObject"
    if method == "POST":
        if "uploads" in query:
            return "CreateMultipartUpload"
        if "uploadId" in query:
            return "CompleteMultipartUpload"
        if "delete" in query:
            return "DeleteObjects"
    if method == "DELETE":
        return "AbortMultipartUpload" if "uploadId" in query else "DeleteObject"
    if method == "HEAD":
        return "HeadObject" if key else "HeadBucket"
    if method == "GET":
        if key and "uploadId" in query:
            return "ListParts"
        if key:
            return "GetObjectAttributes" if "attributes" in query else "GetObject"
        for name, op in (
            ("location", "GetBucketLocation"),
            ("uploads", "ListMultipartUploads"),
            ("versioning", "GetBucketVersioning"),
        ):
            if name in query:
                return op
        return "ListObjects"
    return f"{method} {'object' if key else 'bucket'}"


_APP = re.compile(r"(?:^| )app/(\S+)")


class Recorder:
    """WSGI middleware in front of moto."""

    def __init__(self, app):
        self.app = app
        self.requests: list[Request] = []
        self.faults: list[Fault] = []
        self.capture_bodies = False  # record a Body for each PutObject/UploadPart (plain bodies)
        self.bodies: list[Body] = []
        self._lock = threading.Lock()

    def add_fault(self, fault: Fault) -> Fault:
        with self._lock:
            self.faults.append(fault)
        return fault

    def mark(self) -> int:
        with self._lock:
            return len(self.requests)

    def since(self, mark: int = 0, bucket: str | None = None) -> list[Request]:
        with self._lock:
            return [r for r in self.requests[mark:] if bucket in (None, r.bucket)]

    def writes(self, mark: int = 0, bucket: str | None = None) -> list[Request]:
        return [r for r in self.since(mark, bucket) if r.op in WRITES]

    def __call__(self, environ, start_response):
        path = unquote(environ.get("PATH_INFO", ""))
        bucket, _, key = path.lstrip("/").partition("/")
        query = parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True)
        op = operation(environ["REQUEST_METHOD"], key, query, environ)
        with self._lock:
            fault = next((f for f in self.faults if f.matches(op, bucket, key)), None)
            if fault is not None:
                fault.times -= 1
            seq = len(self.requests)
            part = int(query["partNumber"][0]) if op == "UploadPart" else None
            app = _APP.search(environ.get("HTTP_USER_AGENT", ""))
            app = app[1] if app else ""
            upload = query.get("uploadId", [""])[0][:8]
            self.requests.append(Request(seq, op, bucket, key, 0, part, app, upload))

        def record(status: str, headers, exc_info=None):
            with self._lock:
                code = int(status.split()[0])
                self.requests[seq] = Request(seq, op, bucket, key, code, part, app, upload)
            return start_response(status, headers, exc_info)

        if (
            self.capture_bodies
            and op in ("PutObject", "UploadPart")
            and "aws-chunked" not in environ.get("HTTP_CONTENT_ENCODING", "")
        ):
            self._capture(op, key, environ)
        if fault is not None:
            body = _read_body(environ)
            if fault.truncate:
                environ["wsgi.input"] = io.BytesIO(body[: len(body) // 2])
                environ["CONTENT_LENGTH"] = str(len(body) // 2)
            else:
                xml = (
                    f"<?xml version='1.0' encoding='UTF-8'?><Error><Code>{fault.code}</Code>"
                    f"<Message>injected by the test</Message></Error>"
                ).encode()
                record(
                    f"{fault.status} Injected",
                    [("Content-Type", "application/xml"), ("Content-Length", str(len(xml)))],
                )
                return [xml]
        return self.app(environ, record)

    def _capture(self, op: str, key: str, environ) -> None:
        from awscrt import checksums

        body = _read_body(environ)
        environ["wsgi.input"] = io.BytesIO(body)
        crc = base64.b64encode(checksums.crc64nvme(body).to_bytes(8, "big")).decode()
        with self._lock:
            self.bodies.append(
                Body(
                    op=op,
                    key=key,
                    content_sha256=environ.get("HTTP_X_AMZ_CONTENT_SHA256"),
                    checksum_crc64nvme=environ.get("HTTP_X_AMZ_CHECKSUM_CRC64NVME"),
                    sha256=hashlib.sha256(body).hexdigest(),
                    crc64nvme=crc,
                )
            )


def _read_body(environ) -> bytes:
    length = environ.get("CONTENT_LENGTH")
    stream = environ["wsgi.input"]
    if length:
        return stream.read(int(length))
    return stream.read() if environ.get("wsgi.input_terminated") else b""


class QuietRequestHandler(MotoRequestHandler):
    """moto's handler without werkzeug's access log: a line per request ("PUT /bucket/key
    HTTP/1.1" 200), hundreds per test, on stderr once werkzeug has added its own handler (it does
    when it first logs where no handler listens, e.g. between tests) and in every failing test's
    report. The Recorder keeps every request for the tests that count them; errors are still
    logged."""

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass


class QuietMotoServer(ThreadedMotoServer):
    """moto's ThreadedMotoServer on 127.0.0.1 whose requests are not logged (QuietRequestHandler),
    stopped within 50 ms (moto is pinned: 5.2.5)."""

    def __init__(self):
        super().__init__(ip_address="127.0.0.1", port=0, verbose=False)

    def _app(self):
        return DomainDispatcherApplication(create_backend_app)

    def _server_entry(self) -> None:
        self._server = make_server(
            self._ip_address, self._port, self._app(), True, request_handler=QuietRequestHandler
        )
        self._server_ready_event.set()
        self._server.serve_forever(poll_interval=0.05)  # a quick stop()

    @property
    def endpoint(self) -> str:
        host, port = self.get_host_and_port()
        return f"http://{host}:{port}"

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


class RecordingMotoServer(QuietMotoServer):
    """QuietMotoServer whose app is wrapped by a Recorder (every request kept, faults injected)."""

    def __init__(self):
        super().__init__()
        self.recorder = Recorder(super()._app())

    def _app(self):
        return self.recorder
