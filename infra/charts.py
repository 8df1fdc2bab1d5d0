"""The third-party chart the stack deploys, read from the project's vendor directory.

`hyperpod-dpd fetch` (`make fetch`) downloads the pinned HyperPod dependencies chart with its
sub-charts once into `.hyperpod-dpd/` of the project (gitignored). The program only reads it, so
a `pulumi preview` fetches nothing, and the chart is addressed by a project-relative path (Pulumi
runs the program from the project directory), the same on every machine. A missing chart stops
the program with the command that fetches it. (The AWS Load Balancer Controller's IAM policy is
vendored in the repository instead: specs/alb_controller/.)
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pulumi

from core.versions import GitHubChart

PROJECT_DIR = Path(__file__).resolve().parents[1]
VENDOR_DIR = ".hyperpod-dpd"
COMPLETE = ".fetched"  # written last by the fetch, once the sub-charts are in place


class VendorError(pulumi.RunError):
    """A RunError: `pulumi up` shows the message without a traceback."""


def chart_path(pin: GitHubChart) -> str:
    """The chart's directory, relative to the project directory."""
    return f"{VENDOR_DIR}/charts/{pin.repo.replace('/', '__')}/{pin.commit}/{pin.path}"


def vendored_chart(pin: GitHubChart, project_dir: Path = PROJECT_DIR) -> str:
    if not (project_dir / chart_path(pin) / COMPLETE).exists():
        raise VendorError(_missing(f"the chart {pin.repo}@{pin.commit}/{pin.path}"))
    return chart_path(pin)


def _missing(what: str) -> str:
    return (
        f"{what} is not in {VENDOR_DIR}/ of the project: run `make fetch` (hyperpod-dpd fetch) "
        "once before `pulumi preview` or `pulumi up`; it downloads the pinned chart there"
    )


# The resolver the program uses: the vendor directory by default; the offline plan installs
# its own, which needs nothing on disk.
_chart_resolver: Callable[[GitHubChart], str] = vendored_chart


def resolve_chart(pin: GitHubChart) -> str:
    return _chart_resolver(pin)


@contextlib.contextmanager
def offline() -> Iterator[None]:
    """Within this block nothing is read from the vendor directory: the chart resolves to its
    path (what the engine records, the same as a real run's)."""
    global _chart_resolver
    previous = _chart_resolver
    _chart_resolver = chart_path
    try:
        yield
    finally:
        _chart_resolver = previous
