"""A real Prometheus server for the tests (Debian's `prometheus` package, or any on PATH): on
127.0.0.1 at a free port, with its storage in a temporary directory, scraping the given targets
every second; `query` is its HTTP API's instant query (what KEDA's prometheus scaler calls).

The scrape labels each target `pod` and `namespace`, the labels the stack's queries select a
pool by (core/vllm/scaling_signals.py). Where the HyperPod observability add-on's collector sets them
is not published (an AWS-managed add-on: no public collector configuration was found in
aws/sagemaker-hyperpod-cli or the AWS docs); these are Prometheus' conventional names for
Kubernetes pod discovery's __meta_kubernetes_pod_name and __meta_kubernetes_namespace, which the
queries have always assumed (specs/scaling.py).
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import yaml

INSTALL_HINT = "apt-get install prometheus (Debian/Ubuntu) or brew install prometheus (macOS)"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def start(
    directory: Path, targets: list[tuple[int, dict[str, str]]], expect_series: str
) -> Prometheus:
    """Prometheus scraping `targets` ((port, labels) each) into `directory`, once
    `expect_series` (a PromQL count, e.g. of the targets up) reads len(targets)."""
    binary = shutil.which("prometheus")
    if binary is None:
        raise RuntimeError(f"these tests run a real Prometheus: {INSTALL_HINT}")
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "scrape_configs": [
            {
                "job_name": "vllm",
                "static_configs": [
                    {"targets": [f"127.0.0.1:{port}"], "labels": labels} for port, labels in targets
                ],
            }
        ],
    }
    (directory / "prometheus.yml").write_text(yaml.safe_dump(config))
    # promtool (the same package) judges the configuration before the server reads it.
    promtool = shutil.which("promtool")
    if promtool is None:
        raise RuntimeError(f"these tests check the configuration with promtool: {INSTALL_HINT}")
    check = subprocess.run(
        [promtool, "check", "config", str(directory / "prometheus.yml")],
        capture_output=True,
        text=True,
        check=False,
    )
    if check.returncode != 0:
        raise RuntimeError(f"promtool check config: {check.stdout}{check.stderr}")

    def scraped_every_target(server: Prometheus) -> bool:
        up = server.query(expect_series)["result"]
        return bool(up) and float(up[0]["value"][1]) == len(targets)

    return _serve(binary, directory, directory / "data", scraped_every_target,
                  "did not scrape every target")  # fmt: skip


def serve_backfill(directory: Path, openmetrics_text: str) -> Prometheus:
    """Prometheus serving the samples of `openmetrics_text` (with their timestamps), backfilled
    into blocks by `promtool tsdb create-blocks-from openmetrics`; it scrapes nothing."""
    binary, promtool = shutil.which("prometheus"), shutil.which("promtool")
    if binary is None or promtool is None:
        raise RuntimeError(f"these tests run a real Prometheus and promtool: {INSTALL_HINT}")
    source, data = directory / "series.om", directory / "data"
    source.write_text(openmetrics_text)
    created = subprocess.run(
        [promtool, "tsdb", "create-blocks-from", "openmetrics", str(source), str(data)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if created.returncode != 0:
        raise RuntimeError(f"promtool backfill: {created.stdout}{created.stderr}")
    (directory / "prometheus.yml").write_text(yaml.safe_dump({"global": {}}))
    return _serve(
        binary,
        directory,
        data,
        lambda server: bool(server.query("count({__name__=~'.+'})")["result"]),
        "served no backfilled series",
    )


def _serve(binary: str, directory: Path, data: Path, ready, failure: str) -> Prometheus:
    """Prometheus on 127.0.0.1 (a free port) with directory/prometheus.yml and its TSDB in
    `data`, once `ready(server)` holds (60 s at most; a query of a server still starting counts
    as not yet)."""
    port = free_port()
    log = directory / "prometheus.log"
    process = subprocess.Popen(
        [
            binary,
            f"--config.file={directory / 'prometheus.yml'}",
            f"--storage.tsdb.path={data}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=log.open("w"),
    )
    server = Prometheus(process, f"http://127.0.0.1:{port}", log)
    deadline = time.monotonic() + 60
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"prometheus exited ({process.returncode}): {log.read_text()}")
        try:
            if ready(server):
                return server
        except (OSError, AssertionError):
            pass
        if time.monotonic() > deadline:
            server.stop()
            raise RuntimeError(f"prometheus {failure}: {log.read_text()}")
        time.sleep(0.2)
