"""The fake HTTP servers' base (a fake vLLM exporter, Hugging Face Hub, Kubernetes API, GitHub):
`http.server.ThreadingHTTPServer` that says nothing when a client hangs up.

socketserver prints a traceback to stderr for every request whose client went away before the
answer was written (BrokenPipeError, ConnectionResetError): a Prometheus scrape that timed out
on a busy machine, a download killed on purpose. The server thread prints it into whatever
test is running then, which fails a test that asserts its output has no traceback. A client
that hung up is not the server's error; any other error is still printed.
"""

from __future__ import annotations

import sys
from http.server import ThreadingHTTPServer


class QuietHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):  # BrokenPipe, ConnectionReset, ...
            return
        super().handle_error(request, client_address)
