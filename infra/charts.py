"""Third-party artifacts the stack deploys, read from the project's vendor directory.

`hyperpod-dpd fetch` (`make fetch`) downloads each pinned artifact once into
`.hyperpod-dpd/` of the project (gitignored): the HyperPod dependencies chart with its
sub-charts, and the AWS Load Balancer Controller's IAM policy. The program only reads them, so a
`pulumi preview` fetches nothing, and the chart is addressed by a project-relative path
(Pulumi runs the program from the project directory), the same on every machine. A missing
artifact stops the program with the command that fetches it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pulumi

from core.versions import GitHubChart, GitHubFile

PROJECT_DIR = Path(__file__).resolve().parents[1]
VENDOR_DIR = ".hyperpod-dpd"
COMPLETE = ".fetched"  # written last by the fetch, once the sub-charts are in place


class VendorError(pulumi.RunError):
    """A RunError: `pulumi up` shows the message without a traceback."""


def chart_path(pin: GitHubChart) -> str:
    """The chart's directory, relative to the project directory."""
    return f"{VENDOR_DIR}/charts/{pin.repo.replace('/', '__')}/{pin.commit}/{pin.path}"


def file_path(pin: GitHubFile) -> str:
    return f"{VENDOR_DIR}/files/{pin.raw_path}"


def vendored_chart(pin: GitHubChart, project_dir: Path = PROJECT_DIR) -> str:
    if not (project_dir / chart_path(pin) / COMPLETE).exists():
        raise VendorError(_missing(f"the chart {pin.repo}@{pin.commit}/{pin.path}"))
    return chart_path(pin)


def vendored_file(pin: GitHubFile, project_dir: Path = PROJECT_DIR) -> str:
    path = project_dir / file_path(pin)
    if not path.exists():
        raise VendorError(_missing(f"{pin.path} of {pin.repo}@{pin.ref}"))
    data = path.read_bytes()
    if pin.sha256 is not None and hashlib.sha256(data).hexdigest() != pin.sha256:
        raise VendorError(
            f"{path} is not {pin.path} of {pin.repo}@{pin.ref} (sha256 {pin.sha256}): delete it "
            "and run `make fetch` (hyperpod-dpd fetch) again"
        )
    return data.decode()


def _missing(what: str) -> str:
    return (
        f"{what} is not in {VENDOR_DIR}/ of the project: run `make fetch` (hyperpod-dpd fetch) "
        "once before `pulumi preview` or `pulumi up`; it downloads the pinned artifacts there"
    )


def offline_file_text(pin: GitHubFile) -> str:
    """Stands in for a fetched IAM policy in the offline plan: a policy IAM's grammar takes, no
    statement, naming its source in the policy's optional `Id` (IAM JSON policy elements: Id;
    https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_id.html)."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Id": f"fetched at deploy time: {pin.repo}@{pin.ref}/{pin.path}"
            + (f" (tag {pin.tag})" if pin.tag else ""),
            "Statement": [],
        }
    )


# The resolvers the program uses: the vendor directory by default; the offline plan installs
# its own, which need nothing on disk.
_chart_resolver: Callable[[GitHubChart], str] = vendored_chart
_file_resolver: Callable[[GitHubFile], str] = vendored_file


def resolve_chart(pin: GitHubChart) -> str:
    return _chart_resolver(pin)


def resolve_file(pin: GitHubFile) -> str:
    return _file_resolver(pin)


@contextlib.contextmanager
def offline() -> Iterator[None]:
    """Within this block nothing is read from the vendor directory: the chart resolves to its
    path (what the engine records, the same as a real run's) and files to a placeholder."""
    global _chart_resolver, _file_resolver
    previous = _chart_resolver, _file_resolver
    _chart_resolver, _file_resolver = chart_path, offline_file_text
    try:
        yield
    finally:
        _chart_resolver, _file_resolver = previous
