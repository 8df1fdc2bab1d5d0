"""Fetching the pinned dependencies chart, against a local HTTP server (a fake GitHub)."""

from __future__ import annotations

import http.server
import io
import tarfile
import threading
from pathlib import Path

import pytest

from core.versions import HYPERPOD_DEPENDENCIES_CHART, GitHubChart
from infra.charts import ChartFetchError, chart_dir, fetch_chart, offline_chart_path

PIN = GitHubChart("aws/example-repo", "0123456789abcdef0123456789abcdef01234567", "charts/deps")
TOP = f"example-repo-{PIN.commit}"


def tarball(members: dict[str, bytes], symlink: str | None = None) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        if symlink:
            info = tarfile.TarInfo(symlink)
            info.type = tarfile.SYMTYPE
            info.linkname = "/etc/passwd"
            tar.addfile(info)
    return buf.getvalue()


@pytest.fixture
def server():
    state = {"body": b"", "status": 200, "requests": []}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            state["requests"].append(self.path)
            self.send_response(state["status"])
            self.send_header("Content-Length", str(len(state["body"])))
            self.end_headers()
            self.wfile.write(state["body"])

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    state["url"] = f"http://127.0.0.1:{httpd.server_address[1]}"
    yield state
    httpd.shutdown()


def test_fetches_only_the_chart_subdirectory_once(server, tmp_path):
    server["body"] = tarball(
        {
            f"{TOP}/charts/deps/Chart.yaml": b"apiVersion: v2\nname: deps\nversion: 0.1.0\n",
            f"{TOP}/charts/deps/values.yaml": b"a: 1\n",
            f"{TOP}/README.md": b"not part of the chart",
        }
    )
    path = fetch_chart(PIN, cache=tmp_path, base_url=server["url"])
    assert path == chart_dir(PIN, tmp_path)
    assert sorted(p.name for p in path.iterdir()) == ["Chart.yaml", "values.yaml"]
    assert server["requests"] == [f"/aws/example-repo/tar.gz/{PIN.commit}"]
    assert fetch_chart(PIN, cache=tmp_path, base_url=server["url"]) == path
    assert len(server["requests"]) == 1  # cached by commit


def test_archive_without_the_chart_is_an_error(server, tmp_path):
    server["body"] = tarball({f"{TOP}/other/Chart.yaml": b"x"})
    with pytest.raises(ChartFetchError, match="has no chart at charts/deps"):
        fetch_chart(PIN, cache=tmp_path, base_url=server["url"])


def test_links_in_the_archive_are_refused(server, tmp_path):
    server["body"] = tarball(
        {f"{TOP}/charts/deps/Chart.yaml": b"x"}, symlink=f"{TOP}/charts/deps/evil"
    )
    with pytest.raises(ChartFetchError, match="refusing archive member"):
        fetch_chart(PIN, cache=tmp_path, base_url=server["url"])


def test_http_error_names_the_pin_and_the_way_out(server, tmp_path):
    server["status"], server["body"] = 404, b"not found"
    with pytest.raises(ChartFetchError) as info:
        fetch_chart(PIN, cache=tmp_path, base_url=server["url"])
    assert PIN.commit in str(info.value) and "pre-populate" in str(info.value)


def test_offline_path_is_stable_and_machine_independent():
    path = offline_chart_path(HYPERPOD_DEPENDENCIES_CHART)
    assert str(path).startswith("$HYPERPOD_DPD_CACHE/charts/aws__sagemaker-hyperpod-cli/")
    assert path == Path(str(path))
