"""Regenerate the hash-pinned requirements files of the two in-cluster Jobs.

  python scripts/lock_job_requirements.py           # rewrite the three files below
  python scripts/lock_job_requirements.py --check   # exit 1 if a committed file differs

The Jobs run a stock Python image (core/versions.py JOB_PYTHON_IMAGE: CPython 3.11 on Debian 12,
glibc 2.36, x86_64) and install their packages with `pip install --require-hashes --no-deps`
(specs/staging.py, hyperpod_dpd/benchmark/job.py, hyperpod_dpd/shared/venvs.py), so each file
lists every package, dependencies included, as `name==version --hash=sha256:...`:

- requirements-job-staging.txt: the staging Job (specs/staging.py PIP_PACKAGES: boto3[crt] and
  huggingface_hub, the pins of requirements.txt) and what they depend on;
- requirements-job-benchmark.txt: the benchmark Job's program (core/versions.py JOB_BOTO3);
- requirements-job-loadtest.txt: aiperf's venv in the benchmark Job, exactly the versions of
  requirements-loadtest.txt for this platform (that universal lock, scripts/lock.py, lists every
  package; this script fails if its pins do not resolve to themselves alone).

scripts/lock.py (`make lock`) runs this after writing the project's own locks.

Where the pins come from: pip resolves those inputs against PyPI (https://pypi.org/simple, this
machine's pip configuration ignored) for CPython 3.11 manylinux x86_64 wheels only
(`--only-binary=:all:`), without installing or downloading the wheels (`--dry-run --report`:
PyPI serves each wheel's metadata apart); each hash is the sha256 PyPI publishes for the wheel
pip chose, which pip checks against the downloaded file at install time, so a wrong or altered
file fails the Job rather than being installed. Environment markers are evaluated on the running
machine, so run this on Linux x86_64 (it refuses to run elsewhere).
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a file from any directory, installed or not

from core.job_image import JOB_PYTHON  # noqa: E402
from core.versions import JOB_BOTO3  # noqa: E402
from hyperpod_dpd.shared.venvs import requirement_set  # noqa: E402
from specs.staging import PIP_PACKAGES  # noqa: E402

INDEX = "https://pypi.org/simple"
# What the image's pip accepts, best first (glibc 2.36: manylinux_2_36 down to manylinux1).
PLATFORMS = [
    *(f"manylinux_2_{minor}_x86_64" for minor in range(36, 16, -1)),
    "manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64",
]  # fmt: skip
LOADTEST = ROOT / "requirements-loadtest.txt"
DEV_LOCK = ROOT / "requirements-dev.txt"
# What `python -m venv` puts in every venv and pip keeps for itself: not in the locks.
VENV_PROVIDED = {"pip"}
# Output file -> (what it is for, pip's requirement arguments).
LOCKS: dict[str, tuple[str, list[str]]] = {
    "requirements-job-staging.txt": (
        "the checkpoint staging Job (specs/staging.py PIP_PACKAGES)",
        list(PIP_PACKAGES),
    ),
    "requirements-job-benchmark.txt": (
        "the benchmark Job's program (core/versions.py JOB_BOTO3)",
        [JOB_BOTO3],
    ),
    "requirements-job-loadtest.txt": (
        "aiperf's venv in the benchmark Job (the pins of requirements-loadtest.txt)",
        ["-r", str(LOADTEST)],
    ),
}


def resolve(requirements: list[str], cert: str | None, pins: set[str] = frozenset()) -> list[dict]:
    """pip's installation report for `requirements` on the Jobs' image (nothing installed), each
    package at its version in `pins` (`name==version`) where it has one there."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        constraints = Path(tmp) / "constraints.txt"
        constraints.write_text("".join(f"{pin}\n" for pin in sorted(pins)))
        argv = [
            sys.executable, "-m", "pip", "install", "--isolated", "--quiet",
            "--disable-pip-version-check", "--index-url", INDEX, "--dry-run",
            "--ignore-installed", "--report", str(report), "--target", str(Path(tmp) / "t"),
            "--only-binary=:all:", "--python-version", JOB_PYTHON, "--implementation", "cp",
            *(x for p in PLATFORMS for x in ("--platform", p)),
            *(["--cert", cert] if cert else []), "--constraint", str(constraints), *requirements,
        ]  # fmt: skip
        subprocess.run(argv, check=True)
        return json.loads(report.read_text())["install"]


def _pin(item: dict) -> tuple[str, str, str, str]:
    """(name, version, sha256, wheel file name) of one entry of pip's report."""
    meta, info = item["metadata"], item["download_info"]
    sha256 = info.get("archive_info", {}).get("hashes", {}).get("sha256")
    if not sha256:
        raise SystemExit(f"{meta['name']}: the index published no sha256 for {info['url']}")
    return meta["name"], meta["version"], sha256, info["url"].rsplit("/", 1)[-1]


def normalize(name: str) -> str:
    return name.strip().lower().replace("_", "-").replace(".", "-")


def render(out: str, purpose: str, requirements: list[str], report: list[dict]) -> str:
    inputs = (
        "-r requirements-loadtest.txt" if requirements[:1] == ["-r"] else " ".join(requirements)
    )
    lines = [
        f"# Hash-pinned packages of {purpose}. Generated by scripts/lock_job_requirements.py",
        f"# (do not edit; rerun it) from: {inputs}",
        "# Resolved on PyPI for CPython 3.11, manylinux x86_64 wheels (the Jobs' image); each hash",
        "# is PyPI's sha256 of the wheel named above it. Installed with:",
        f"#   pip install --require-hashes --no-deps --only-binary=:all: -r {out}",
    ]
    for name, version, sha256, wheel in sorted(map(_pin, report), key=lambda p: normalize(p[0])):
        lines += [f"# {wheel}", f"{name}=={version} --hash=sha256:{sha256}"]
    return "\n".join(lines) + "\n"


def lock(out: str, cert: str | None) -> str:
    purpose, requirements = LOCKS[out]
    # The Jobs' boto3 and huggingface_hub and what they need at the versions the tests ran
    # (requirements-dev.txt, the laptop's lock): botocore 1.44.8, not the newest 1.44.x.
    laptop = set() if requirements[:1] == ["-r"] else requirement_set(DEV_LOCK.read_text())
    report = resolve(requirements, cert, laptop)
    if requirements[:1] == ["-r"]:
        report = [i for i in report if normalize(i["metadata"]["name"]) not in VENV_PROVIDED]
        # The laptop's lock is universal: its pins for this platform (markers evaluated here).
        wanted = dict(p.split("==", 1) for p in requirement_set(LOADTEST.read_text()))
        got = {normalize(n): v for n, v, _, _ in map(_pin, report)}
        if got != wanted:
            diff = sorted(set(got.items()) ^ set(wanted.items()))
            raise SystemExit(f"{LOADTEST.name} does not resolve to itself alone: {diff}")
    return render(out, purpose, requirements, report)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--check", action="store_true", help="exit 1 if a committed file differs")
    p.add_argument("--cert", help="a CA bundle for pip (a proxy's), as pip's own --cert")
    args = p.parse_args(argv)
    if (platform.system(), platform.machine()) != ("Linux", "x86_64"):
        print("run this on Linux x86_64: pip evaluates markers on this machine", file=sys.stderr)
        return 2
    stale = []
    for out in LOCKS:
        text, path = lock(out, args.cert), ROOT / out
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(out)
        else:
            path.write_text(text)
            print(f"wrote {out}")
    if stale:
        print(f"out of date (run scripts/lock_job_requirements.py): {', '.join(stale)}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
