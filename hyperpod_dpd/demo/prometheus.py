"""A real Prometheus on this machine (Debian's `prometheus` package, or any on PATH): on 127.0.0.1
at a free port chosen when it starts, its storage in a directory of the caller's, in a process
group of its own (hyperpod_dpd/shared/children.py) so that stopping it leaves nothing behind.

`serve_backfill` serves recorded samples: OpenMetrics text with timestamps, written into blocks
by `promtool tsdb create-blocks-from openmetrics` (the same package) before the server starts;
it scrapes nothing. `serve` is the start shared with a scraping server (the tests' fake vLLM
fleet). Both return once the server answers the readiness check, so a query never meets a server
still starting; `query` is the HTTP API's instant query.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

from hyperpod_dpd.shared import children

INSTALL_HINT = "apt-get install prometheus (Debian/Ubuntu) or brew install prometheus (macOS)"
READY_SECONDS = 60


class PrometheusError(RuntimeError):
    """Prometheus or promtool missing, refusing its input or not starting: says which."""


def free_port() -> int:
    """A TCP port nothing listens on now (the kernel's pick)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tools() -> tuple[str, str]:
    """The prometheus and promtool binaries on PATH."""
    binary, promtool = shutil.which("prometheus"), shutil.which("promtool")
    if binary is None or promtool is None:
        raise PrometheusError(f"this needs a real Prometheus and promtool: {INSTALL_HINT}")
    return binary, promtool


@dataclass
class Prometheus:
    process: subprocess.Popen
    url: str
    log: Path

    def query(self, promql: str) -> dict:
        """The API's `data` for an instant query; AssertionError with Prometheus' own error."""
        url = f"{self.url}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                body = json.load(r)
        except urllib.error.HTTPError as exc:
            try:
                body = json.load(exc)
            except ValueError:  # not the API's JSON: e.g. 503 while the server is starting
                raise AssertionError(f"{promql}: HTTP {exc.code} {exc.reason}") from None
        assert body["status"] == "success", f"{promql}: {body.get('error')}"
        return body["data"]

    def error_of(self, promql: str) -> str | None:
        """Prometheus' error for `promql` (None: it ran)."""
        try:
            self.query(promql)
        except AssertionError as exc:
            return str(exc)
        return None

    def stop(self) -> None:
        children.stop(self.process, grace=10)


def serve_backfill(directory: Path, openmetrics_text: str) -> Prometheus:
    """Prometheus serving the samples of `openmetrics_text` (with their timestamps), backfilled
    into blocks in `directory`; it scrapes nothing."""
    _, promtool = tools()
    source, data = directory / "series.om", directory / "data"
    source.write_text(openmetrics_text)
    created = subprocess.run(
        [promtool, "tsdb", "create-blocks-from", "openmetrics", str(source), str(data)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if created.returncode != 0:
        raise PrometheusError(f"promtool backfill: {created.stdout}{created.stderr}")
    (directory / "prometheus.yml").write_text(yaml.safe_dump({"global": {}}))
    return serve(
        directory,
        data,
        lambda server: bool(server.query("count({__name__=~'.+'})")["result"]),
        "served no backfilled series",
    )


def serve(
    directory: Path, data: Path, ready: Callable[[Prometheus], bool], failure: str
) -> Prometheus:
    """Prometheus on 127.0.0.1 (a free port) with directory/prometheus.yml and its TSDB in
    `data`, once `ready(server)` holds (READY_SECONDS at most; a query of a server still
    starting counts as not yet). Stopped again when it does not get ready, or the wait is
    interrupted."""
    binary, _ = tools()
    port = free_port()
    log = directory / "prometheus.log"
    with (
        log.open("w") as written,
        children.owned(
            [
                binary,
                f"--config.file={directory / 'prometheus.yml'}",
                f"--storage.tsdb.path={data}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=subprocess.DEVNULL,
            stderr=written,
        ) as process,
    ):
        server = Prometheus(process, f"http://127.0.0.1:{port}", log)
        deadline = time.monotonic() + READY_SECONDS
        while True:
            if process.poll() is not None:
                raise PrometheusError(
                    f"prometheus exited ({process.returncode}): {log.read_text()}"
                )
            try:
                if ready(server):
                    return server
            except (OSError, AssertionError):
                pass
            if time.monotonic() > deadline:
                raise PrometheusError(f"prometheus {failure}: {log.read_text()}")
            time.sleep(0.2)
