"""A real Prometheus server for the tests, scraping the given targets every second
(hyperpod_dpd/demo/prometheus.py `serve` starts it: on 127.0.0.1 at a free port, its storage in a
temporary directory); `query` is its HTTP API's instant query (what KEDA's prometheus scaler
calls). Backfilled servers (recorded series, no scrape) are that module's `serve_backfill`.

The scrape labels each target `pod` and `namespace`, the labels the stack's queries select a
pool by (core/vllm/scaling_signals.py). Where the HyperPod observability add-on's collector sets them
is not published (an AWS-managed add-on: no public collector configuration was found in
aws/sagemaker-hyperpod-cli or the AWS docs); these are Prometheus' conventional names for
Kubernetes pod discovery's __meta_kubernetes_pod_name and __meta_kubernetes_namespace, which the
queries have always assumed (specs/scaling.py).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

from hyperpod_dpd.demo.prometheus import INSTALL_HINT, Prometheus, serve, serve_backfill, tools

__all__ = ["INSTALL_HINT", "serve_backfill", "start"]


def start(
    directory: Path, targets: list[tuple[int, dict[str, str]]], expect_series: str
) -> Prometheus:
    """Prometheus scraping `targets` ((port, labels) each) into `directory`, once
    `expect_series` (a PromQL count, e.g. of the targets up) reads len(targets)."""
    _, promtool = tools()
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

    return serve(directory, directory / "data", scraped_every_target,
                 "did not scrape every target")  # fmt: skip
