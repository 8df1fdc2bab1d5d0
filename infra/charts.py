"""Fetching a Helm chart that lives in a GitHub repository, pinned to a commit.

The chart is downloaded once per commit into a local cache at deploy time (`pulumi up` and
`pulumi preview` need it), never committed to this repository. The offline plan swaps the
resolver for one that only computes the path (no network), see `use_resolver`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tarfile
import tempfile
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pulumi

from infra.versions import GitHubChart

ARCHIVE_BASE_URL = "https://codeload.github.com"
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


# The resolver the program uses: real fetch by default; the offline plan installs its own.
_resolver: Callable[[GitHubChart], Path] = fetch_chart


def resolve_chart(pin: GitHubChart) -> Path:
    return _resolver(pin)


@contextlib.contextmanager
def use_resolver(resolver: Callable[[GitHubChart], Path]) -> Iterator[None]:
    global _resolver
    previous, _resolver = _resolver, resolver
    try:
        yield
    finally:
        _resolver = previous
