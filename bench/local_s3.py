"""The local S3 endpoint the benchmark uploads to: moto on 127.0.0.1, in this process, counting
the object-writing requests each tool sends; and the bucket reads that check and empty a run."""

from __future__ import annotations

import threading
import time

from moto.moto_server.threaded_moto_server import ThreadedMotoServer
from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.serving import make_server

REGION = "us-east-2"
BUCKET = "bench-checkpoints"
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "bench",
    "AWS_SECRET_ACCESS_KEY": "bench",
    "AWS_DEFAULT_REGION": REGION,
    "AWS_REGION": REGION,
    "AWS_EC2_METADATA_DISABLED": "true",
}


class _WriteCounter:
    """Counts PUT/POST requests (PutObject, UploadPart, ...) per path, and the server thread's
    CPU time spent in CompleteMultipartUpload (where moto builds an object's checksum)."""

    def __init__(self, app):
        self.app = app
        self.writes: list[tuple[str, float]] = []  # (path, complete CPU s; 0 for others)
        self._lock = threading.Lock()

    def __call__(self, environ, start_response):
        method, path = environ["REQUEST_METHOD"], environ.get("PATH_INFO", "")
        if method not in ("PUT", "POST"):
            return self.app(environ, start_response)
        completing = method == "POST" and "uploadId=" in environ.get("QUERY_STRING", "")
        start = time.thread_time()
        response = self.app(environ, start_response)
        with self._lock:
            self.writes.append((path, time.thread_time() - start if completing else 0.0))
        return response

    def count(self, prefix: str) -> tuple[int, float]:
        """PUT/POST requests under the prefix, and their CompleteMultipartUpload CPU seconds."""
        with self._lock:
            mine = [cpu for path, cpu in self.writes if path.startswith(prefix)]
        return len(mine), sum(mine)


class CountingMotoServer(ThreadedMotoServer):
    def __init__(self):
        super().__init__(ip_address="127.0.0.1", port=0, verbose=False)
        self.counter = _WriteCounter(DomainDispatcherApplication(create_backend_app))

    def _server_entry(self) -> None:
        self._server = make_server(
            self._ip_address, self._port, self.counter, True, request_handler=MotoRequestHandler
        )
        self._server_ready_event.set()
        self._server.serve_forever()

    @property
    def endpoint(self) -> str:
        host, port = self.get_host_and_port()
        return f"http://{host}:{port}"


def clear(client, prefix: str) -> None:
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
    for page in pages:
        keys = [{"Key": o["Key"]} for o in page.get("Contents", [])]
        if keys:
            client.delete_objects(Bucket=BUCKET, Delete={"Objects": keys, "Quiet": True})


def stored_bytes(client, prefix: str, names: set[str]) -> int:
    total = 0
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
    for page in pages:
        for obj in page.get("Contents", []):
            if obj["Key"].rsplit("/", 1)[-1] in names:
                total += obj["Size"]
    return total
