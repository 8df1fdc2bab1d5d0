"""What the two in-cluster Jobs (checkpoint staging: specs/staging.py; benchmark runs:
hyperpod_dpd/benchmark/job.py) share: they run as a non-root user with no privileges, and install
nothing at run time that is not pinned by hash.

Each Job pip-installs from a requirements file that lists every package, dependencies included,
as `name==version --hash=sha256:...` (requirements-job-*.txt, written by
scripts/lock_job_requirements.py), shipped in the Job's ConfigMap: pip refuses a file whose
hash differs, so an index or mirror can serve only those exact wheels.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

RUN_AS = 1000  # any non-root uid: the image's files are world-readable
# What each Job's container requests of the system node it runs on, and its memory limit: the
# same for both (aiperf's workers keep a few cores busy at 32 streams; the staging program's
# transfers about as many), so one check covers both. The settings check that a system group can
# hold the requests (settings/cluster/capacity.py check_system_fits_jobs) before the stack's staging Job
# and `benchmark run` before its Job: all read them from here.
JOB_CPU_REQUEST = 4  # CPUs
JOB_MEMORY_REQUEST_GIB = 8
JOB_MEMORY_LIMIT_GIB = 16
# pip's flags for a hash-pinned install: every file checked, nothing resolved, no sdist built.
HASHED_INSTALL = ("--require-hashes", "--no-deps", "--only-binary=:all:")
# `name==version`, an optional environment marker (uv's universal locks: `; sys_platform ==
# 'win32'`), then one or more sha256 hashes.
_PINNED = re.compile(
    r"^[A-Za-z0-9][A-Za-z0-9._-]*==[^\s=;,<>!~*]+(\s*;[^-]+?)?(\s+--hash=sha256:[0-9a-f]{64})+$"
)


def pod_security_context() -> dict[str, Any]:
    return {
        "runAsNonRoot": True,
        "runAsUser": RUN_AS,
        "runAsGroup": RUN_AS,
        "fsGroup": RUN_AS,  # the emptyDir volumes are the user's to write
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def no_api_token() -> dict[str, Any]:
    """A pod that never calls the Kubernetes API gets no service account token mounted. IRSA is
    unaffected: the EKS Pod Identity webhook adds its own projected volume (aws-iam-token) with
    the web identity token for any pod whose service account names a role
    (https://docs.aws.amazon.com/eks/latest/userguide/pod-configuration.html; the mutated pod
    spec in https://github.com/aws/amazon-eks-pod-identity-webhook README.md; the API token:
    https://kubernetes.io/docs/tasks/configure-pod-container/configure-service-account/#opt-out-of-api-credential-automounting)."""
    return {"automountServiceAccountToken": False}


def container_security_context(read_only_root: bool = False) -> dict[str, Any]:
    """No privilege escalation and no capabilities; `read_only_root`: writes go to volumes only."""
    context: dict[str, Any] = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
    if read_only_root:
        context["readOnlyRootFilesystem"] = True
    return context


def pip_install_user(requirements: str) -> str:
    """The shell command that installs a hash-pinned `requirements` file into the user's site
    (under $HOME: a volume of the pod), with the image's pip."""
    flags = "--user --quiet --no-cache-dir --disable-pip-version-check " + " ".join(HASHED_INSTALL)
    return f"pip install {flags} -r {shlex.quote(requirements)}"


def index_environment(pip_index_url: str | None) -> list[dict[str, str]]:
    """The container environment that points pip at a mirror (none: PyPI). The hashes are of
    PyPI's files, so a mirror can serve only those."""
    return [{"name": "PIP_INDEX_URL", "value": pip_index_url}] if pip_index_url else []


def requirement_lines(text: str) -> list[str]:
    """The requirements of a requirements file, one string each: lines continued with a
    trailing backslash joined (as pip reads them), comments and blank lines dropped."""
    joined = re.sub(r"\\\n", " ", text)
    lines = (re.sub(r"(^|\s)#.*", "", line).strip() for line in joined.splitlines())
    return [" ".join(line.split()) for line in lines if line]


def unhashed_lines(text: str) -> list[str]:
    """The requirements of a requirements file that are not `name==version` with at least one
    sha256 hash (an option line such as `-r` or `--index-url` counts as one: a hash-pinned file
    needs none)."""
    return [line for line in requirement_lines(text) if not _PINNED.match(line)]


def is_hash_pinned(text: str) -> bool:
    """True for a file with requirements, every one of them pinned by hash."""
    return not unhashed_lines(text) and bool(requirement_lines(text))
