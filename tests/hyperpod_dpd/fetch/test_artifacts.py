"""`hyperpod-dpd fetch` against local servers: a fake GitHub, a Helm repository, an OCI registry."""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import tarfile

import pytest

from core.versions import GitHubChart
from hyperpod_dpd.fetch.artifacts import FetchError, fetch_chart, vendor_dependencies
from infra.charts import COMPLETE, chart_path, vendored_chart
from tests.hyperpod_dpd.fetch.local_http import serving

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
    """Serves `routes[path] = (status, headers, body)`; records each request's path."""
    state = {"routes": {}, "requests": []}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            state["requests"].append(self.path)
            status, headers, body = state["routes"].get(self.path, (404, {}, b"not found"))
            if callable(body):
                status, headers, body = body(self)
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    with serving(Handler) as (state["url"], state["host"]):
        yield state


def _archive_route(server, members):
    server["routes"][f"/aws/example-repo/tar.gz/{PIN.commit}"] = (200, {}, tarball(members))


CHART = b"apiVersion: v2\nname: deps\nversion: 0.1.0\n"


def test_fetches_only_the_chart_subdirectory_once(server, tmp_path):
    _archive_route(
        server,
        {
            f"{TOP}/charts/deps/Chart.yaml": CHART,
            f"{TOP}/charts/deps/values.yaml": b"a: 1\n",
            f"{TOP}/README.md": b"not part of the chart",
        },
    )
    path = fetch_chart(PIN, tmp_path, base_url=server["url"])
    assert path == tmp_path / chart_path(PIN)
    assert sorted(p.name for p in path.iterdir()) == [COMPLETE, "Chart.yaml", "values.yaml"]
    assert fetch_chart(PIN, tmp_path, base_url=server["url"]) == path
    assert len(server["requests"]) == 1  # kept by commit
    # What the program reads: the project-relative path, once the fetch has completed.
    assert vendored_chart(PIN, tmp_path) == chart_path(PIN)
    assert not chart_path(PIN).startswith("/")


def test_the_program_refuses_a_chart_never_fetched_and_names_the_command(tmp_path):
    with pytest.raises(Exception, match=r"run `make fetch` \(hyperpod-dpd fetch\) once"):
        vendored_chart(PIN, tmp_path)


def test_archive_without_the_chart_is_an_error(server, tmp_path):
    _archive_route(server, {f"{TOP}/other/Chart.yaml": b"x"})
    with pytest.raises(FetchError, match="has no chart at charts/deps"):
        fetch_chart(PIN, tmp_path, base_url=server["url"])


def test_links_in_the_archive_are_refused(server, tmp_path):
    body = tarball({f"{TOP}/charts/deps/Chart.yaml": b"x"}, symlink=f"{TOP}/charts/deps/evil")
    server["routes"][f"/aws/example-repo/tar.gz/{PIN.commit}"] = (200, {}, body)
    with pytest.raises(FetchError, match="refusing archive member"):
        fetch_chart(PIN, tmp_path, base_url=server["url"])


def test_http_error_names_the_pin_and_the_way_out(server, tmp_path):
    with pytest.raises(FetchError) as info:
        fetch_chart(PIN, tmp_path, base_url=server["url"])
    assert PIN.commit in str(info.value) and "by hand" in str(info.value)
    assert not (tmp_path / chart_path(PIN)).exists()  # nothing half-fetched is left to use


def _chart_with_dependencies(tmp_path, server, digest_of=None):
    plugin = tarball({"plugin/Chart.yaml": b"name: plugin\n"})
    cert = tarball({"cert-manager/Chart.yaml": b"name: cert-manager\n"})
    index = {
        "entries": {
            "plugin": [
                {"version": "0.9.0", "urls": ["plugin-0.9.0.tgz"], "digest": "0" * 64},
                {
                    "version": "0.16.1",
                    "urls": ["plugin-0.16.1.tgz"],
                    "digest": digest_of or hashlib.sha256(plugin).hexdigest(),
                },
            ]
        }
    }
    layer = "sha256:" + hashlib.sha256(cert).hexdigest()
    manifest = json.dumps(
        {
            "layers": [
                {
                    "mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip",
                    "digest": layer,
                }
            ]
        }
    ).encode()

    def authorized(body):
        def handle(request):
            if request.headers.get("Authorization") != "Bearer anon-token":
                realm = f'Bearer realm="{server["url"]}/token",service="reg",scope="pull"'
                return 401, {"WWW-Authenticate": realm}, b""
            return 200, {}, body

        return handle

    r = server["routes"]
    r["/helm/index.yaml"] = (200, {}, json.dumps(index).encode())
    r["/helm/plugin-0.16.1.tgz"] = (200, {}, plugin)
    r["/token?service=reg&scope=pull"] = (200, {}, b'{"token": "anon-token"}')
    r["/v2/jetstack/charts/cert-manager/manifests/v1.18.2"] = (200, {}, authorized(manifest))
    r[f"/v2/jetstack/charts/cert-manager/blobs/{layer}"] = (200, {}, authorized(cert))
    chart = tmp_path / "chart"
    (chart / "charts" / "local").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(
        "apiVersion: v2\nname: deps\nversion: 0.1.0\ndependencies:\n"
        f"  - {{name: plugin, version: 0.16.1, repository: '{server['url']}/helm'}}\n"
        f"  - {{name: cert-manager, version: v1.18.2, repository: 'oci://{server['host']}/jetstack/charts'}}\n"
        "  - {name: local, version: 0.1.0, repository: 'file://charts/local'}\n"
    )
    return chart, plugin, cert


def test_sub_charts_are_placed_as_helm_dependency_build_does(server, tmp_path):
    chart, plugin, cert = _chart_with_dependencies(tmp_path, server)
    placed = vendor_dependencies(chart, oci_scheme="http")
    assert [p.name for p in placed] == ["plugin-0.16.1.tgz", "cert-manager-v1.18.2.tgz"]
    assert (chart / "charts" / "plugin-0.16.1.tgz").read_bytes() == plugin
    assert (chart / "charts" / "cert-manager-v1.18.2.tgz").read_bytes() == cert
    requests = len(server["requests"])
    vendor_dependencies(chart, oci_scheme="http")
    assert len(server["requests"]) == requests  # present: nothing is fetched again


def test_a_sub_chart_whose_digest_differs_from_the_index_is_refused(server, tmp_path):
    chart, _, _ = _chart_with_dependencies(tmp_path, server, digest_of="f" * 64)
    with pytest.raises(FetchError, match=r"plugin 0\.16\.1 .* is not the published f{64}"):
        vendor_dependencies(chart, oci_scheme="http")
    assert not (chart / "charts" / "plugin-0.16.1.tgz").exists()
