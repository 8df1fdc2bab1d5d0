"""A local HTTP server for the fetch tests (a fake GitHub, Helm repository or OCI registry):
`serving(Handler)` runs it on 127.0.0.1 and yields its URL and host."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from tests.support.quiet_http import QuietHTTPServer


@contextmanager
def serving(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[tuple[str, str]]:
    httpd = QuietHTTPServer(("127.0.0.1", 0), handler)
    # A short poll interval: shutdown() waits up to one interval (0.5 s by default).
    threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    ).start()
    host = f"127.0.0.1:{httpd.server_address[1]}"
    try:
        yield f"http://{host}", host
    finally:
        httpd.shutdown()
        httpd.server_close()
