"""Downloading the pinned third-party chart into the project's vendor directory, once.

What `hyperpod-dpd fetch` does, so that the program itself never downloads (infra/charts.py):
- the HyperPod dependencies chart: the GitHub archive of its pinned commit, only the chart's
  directory, links and escaping paths refused;
- its sub-charts from Helm repositories, as `helm dependency build` would place them
  (`charts/<name>-<version>.tgz`): from an HTTP repository's index.yaml (the archive checked
  against the index's sha256 digest) or an OCI registry (anonymous token, manifest, the chart
  layer checked against its digest). `file://` sub-charts are in the archive already.
(The ALB controller's IAM policy is not downloaded: it is vendored in the repository,
specs/alb_controller/.)
A completed chart gets a marker file last, so an interrupted fetch is redone, never half-used.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from core.versions import GitHubChart
from hyperpod_dpd.fetch.registry import token
from infra.charts import COMPLETE, VendorError, chart_path
from settings.yaml_files import safe_load

ARCHIVE_BASE_URL = "https://codeload.github.com"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
HELM_LAYER = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
TIMEOUT = 60


class FetchError(VendorError):
    pass


def _get(url: str, headers: dict[str, str] | None = None) -> bytes:
    request = urllib.request.Request(url, headers=headers or {})
    with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
        return response.read()


def fetch_chart(
    pin: GitHubChart, project_dir: Path, base_url: str = ARCHIVE_BASE_URL, oci_scheme: str = "https"
) -> Path:
    """The chart's directory in the vendor directory, with its sub-charts; downloaded once."""
    target = project_dir / chart_path(pin)
    if (target / COMPLETE).exists():
        return target
    url = f"{base_url}/{pin.archive_path}"
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "repo.tar.gz"
        try:
            archive.write_bytes(_get(url))
        except OSError as exc:
            raise FetchError(
                f"could not download {pin.repo}@{pin.commit} from {url}: {exc}; check network "
                f"access to GitHub, or put the chart in {target} by hand"
            ) from exc
        extracted = _extract_subdir(archive, pin, Path(tmp) / "x")
        if not (extracted / "Chart.yaml").exists():
            raise FetchError(f"{pin.repo}@{pin.commit} has no chart at {pin.path}")
        vendor_dependencies(extracted, oci_scheme)
        if target.exists():
            shutil.rmtree(target)  # an interrupted earlier fetch
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(extracted), target)
    (target / COMPLETE).write_text(f"{pin.repo}@{pin.commit}/{pin.path}\n")
    return target


def _extract_subdir(archive: Path, pin: GitHubChart, dest: Path) -> Path:
    """Extract only `<repo>-<commit>/<path>/...`, refusing links and paths that escape."""
    prefix = f"{pin.repo.split('/')[1]}-{pin.commit}/{pin.path}/"
    with tarfile.open(archive, "r:gz") as tar:
        members = [m for m in tar.getmembers() if m.name.startswith(prefix)]
        for member in members:
            if member.issym() or member.islnk() or ".." in Path(member.name).parts:
                raise FetchError(f"refusing archive member {member.name!r}")
        tar.extractall(dest, members=members, filter="data")
    return dest / prefix


def vendor_dependencies(chart: Path, oci_scheme: str = "https") -> list[Path]:
    """Place every remote sub-chart of `chart`'s Chart.yaml in `chart/charts/`, as Helm's
    `dependency build` does; Helm refuses to install a chart with one missing, even a disabled
    one, unless it may update dependencies itself (which would fetch on every preview)."""
    meta = safe_load((chart / "Chart.yaml").read_text()) or {}
    placed = []
    for dep in meta.get("dependencies") or []:
        repo, name, version = dep.get("repository") or "", dep["name"], str(dep["version"])
        if not repo or repo.startswith("file://"):
            continue
        target = chart / "charts" / f"{name}-{version}.tgz"
        if not target.exists():
            try:
                data = (
                    _oci_chart(repo, name, version, oci_scheme)
                    if repo.startswith("oci://")
                    else _http_chart(repo, name, version)
                )
            except (OSError, KeyError, ValueError) as exc:
                raise FetchError(
                    f"could not fetch sub-chart {name} {version} from {repo}: {exc}"
                ) from exc
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        placed.append(target)
    return placed


def _verified(data: bytes, digest: str, what: str) -> bytes:
    actual = hashlib.sha256(data).hexdigest()
    if actual != digest.removeprefix("sha256:"):
        raise ValueError(f"{what}: sha256 {actual} is not the published {digest}")
    return data


def _http_chart(repo: str, name: str, version: str) -> bytes:
    base = repo.rstrip("/") + "/"
    index = safe_load(_get(urllib.parse.urljoin(base, "index.yaml")))
    entry = next(e for e in index["entries"][name] if str(e["version"]) == version)
    url = urllib.parse.urljoin(base, entry["urls"][0])
    return _verified(_get(url), entry["digest"], f"{name}-{version}.tgz")


def _oci_chart(repo: str, name: str, version: str, scheme: str) -> bytes:
    host, _, path = repo.removeprefix("oci://").partition("/")
    registry = f"{scheme}://{host}/v2/{path}/{name}"
    headers = {"Accept": OCI_MANIFEST}
    try:
        manifest = _get(f"{registry}/manifests/{version}", headers)
    except urllib.error.HTTPError as exc:
        if exc.code != 401:
            raise
        challenge = exc.headers.get("WWW-Authenticate", "")
        headers["Authorization"] = f"Bearer {token(challenge, f'{path}/{name}')}"
        manifest = _get(f"{registry}/manifests/{version}", headers)
    (layer,) = [x for x in json.loads(manifest)["layers"] if x["mediaType"] == HELM_LAYER]
    blob = _get(f"{registry}/blobs/{layer['digest']}", headers)
    return _verified(blob, layer["digest"], f"{name}:{version}")
