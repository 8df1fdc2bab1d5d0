"""Fetching pinned third-party artifacts from GitHub at deploy time: a Helm chart directory
(pinned to a commit) and single files (pinned to a tag), such as an upstream IAM policy.

Each is downloaded once into a local cache when `pulumi up`/`preview` runs, never committed to
this repository. The offline plan swaps the resolvers for ones that fetch nothing, see
`offline`.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tarfile
import tempfile
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pulumi

from core.versions import GitHubChart, GitHubFile

ARCHIVE_BASE_URL = "https://codeload.github.com"
RAW_BASE_URL = "https://raw.githubusercontent.com"
DEFAULT_CACHE = Path(os.environ.get("HYPERPOD_DPD_CACHE", Path.home() / ".cache" / "hyperpod-dpd"))


class ChartFetchError(pulumi.RunError):
    """A RunError: `pulumi up` shows the message without a traceback."""


def chart_dir(pin: GitHubChart, cache: Path = DEFAULT_CACHE) -> Path:
    return cache / "charts" / pin.repo.replace("/", "__") / pin.commit / pin.path


def fetch_chart(
    pin: GitHubChart, cache: Path = DEFAULT_CACHE, base_url: str = ARCHIVE_BASE_URL
) -> Path:
    """Return the chart directory, downloading the repository archive of `pin.commit` if needed."""
    target = chart_dir(pin, cache)
    if (target / "Chart.yaml").exists():
        return target
    url = f"{base_url}/{pin.archive_path}"
    with tempfile.TemporaryDirectory(dir=_mkdir(cache)) as tmp:
        archive = Path(tmp) / "repo.tar.gz"
        try:
            with urllib.request.urlopen(url, timeout=60) as response, archive.open("wb") as out:
                shutil.copyfileobj(response, out)
        except OSError as exc:
            raise ChartFetchError(
                f"could not download {pin.repo}@{pin.commit} from {url}: {exc}. The HyperPod "
                "dependencies chart is fetched at deploy time; check network access to GitHub "
                f"or pre-populate {target}"
            ) from exc
        extracted = _extract_subdir(archive, pin, Path(tmp) / "x")
        target.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError, OSError):
            extracted.rename(target)  # atomic; a concurrent run may have won the race
    if not (target / "Chart.yaml").exists():
        raise ChartFetchError(f"{pin.repo}@{pin.commit} has no chart at {pin.path}")
    return target


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _extract_subdir(archive: Path, pin: GitHubChart, dest: Path) -> Path:
    """Extract only `<repo>-<commit>/<path>/...`, refusing links and paths that escape."""
    prefix = f"{pin.repo.split('/')[1]}-{pin.commit}/{pin.path}/"
    with tarfile.open(archive, "r:gz") as tar:
        members = [m for m in tar.getmembers() if m.name.startswith(prefix)]
        for member in members:
            if member.issym() or member.islnk() or ".." in Path(member.name).parts:
                raise ChartFetchError(f"refusing archive member {member.name!r}")
        tar.extractall(dest, members=members, filter="data")
    return dest / prefix


def offline_chart_path(pin: GitHubChart) -> Path:
    """Where the chart would be, without fetching: for the offline plan (stable across machines)."""
    return chart_dir(pin, Path("$HYPERPOD_DPD_CACHE"))


def fetch_file(pin: GitHubFile, cache: Path = DEFAULT_CACHE, base_url: str = RAW_BASE_URL) -> str:
    """The text of `pin`, from the cache or downloaded once."""
    target = cache / "files" / pin.raw_path
    if target.exists():
        return target.read_text()
    url = f"{base_url}/{pin.raw_path}"
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            text = response.read().decode()
    except OSError as exc:
        raise ChartFetchError(
            f"could not download {pin.path} of {pin.repo}@{pin.ref} from {url}: {exc}; check "
            f"network access to GitHub or pre-populate {target}"
        ) from exc
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    return text


def offline_file_text(pin: GitHubFile) -> str:
    """Stands in for a fetched IAM policy in the offline plan: valid JSON naming its source."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [],
            "Comment": f"fetched at deploy time: {pin.repo}@{pin.ref}/{pin.path}",
        }
    )


# The resolvers the program uses: real fetches by default; the offline plan installs its own.
_chart_resolver: Callable[[GitHubChart], Path] = fetch_chart
_file_resolver: Callable[[GitHubFile], str] = fetch_file


def resolve_chart(pin: GitHubChart) -> Path:
    return _chart_resolver(pin)


def resolve_file(pin: GitHubFile) -> str:
    return _file_resolver(pin)


@contextlib.contextmanager
def offline() -> Iterator[None]:
    """Within this block nothing is downloaded: charts resolve to a placeholder path and files
    to a placeholder document (the offline plan)."""
    global _chart_resolver, _file_resolver
    previous = _chart_resolver, _file_resolver
    _chart_resolver, _file_resolver = offline_chart_path, offline_file_text
    try:
        yield
    finally:
        _chart_resolver, _file_resolver = previous
