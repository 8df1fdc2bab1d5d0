"""The in-cluster benchmark run as Kubernetes objects: a Job on the system group and the
ConfigMap that ships it the code (pure data, rendered here; hyperpod_dpd/benchmark/cluster_run.py
creates them and follows the run).

The Job runs the benchmark code of this checkout, not a copy baked into an image: the ConfigMap
holds the files `CODE_FILES` lists (a test runs the run from those files alone), laid out at
their paths by the volume's `items`. The container is a stock Python (core/versions.py) that
installs boto3 with the project's pin; the program then builds aiperf's venv from
requirements-loadtest.txt, as on a laptop. Nothing is installed that is not pinned by hash
(core/job_pods.py): boto3 comes from requirements-job-benchmark.txt, and the Job's
requirements-loadtest.txt is requirements-job-loadtest.txt (the same versions, each with its
hash), which the venv's pip then installs with --require-hashes. One Job per run, never retried
(a retry would send the load twice); deleted a week after it ends, and its ConfigMap with it
(owner reference).
"""

from __future__ import annotations

import json
import secrets
import shlex
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core import api_key
from core.job_pods import (
    JOB_CPU_REQUEST,
    JOB_MEMORY_LIMIT_GIB,
    JOB_MEMORY_REQUEST_GIB,
    container_security_context,
    index_environment,
    no_api_token,
    pip_install_user,
    pod_security_context,
)
from core.regions import region_environment
from core.versions import JOB_PYTHON_IMAGE
from core.vocabulary import BENCHMARK_LABEL, role_node_selector

ROOT = Path(__file__).resolve().parents[2]
# The in-cluster program and everything it imports (tests/hyperpod_dpd/benchmark/test_job_run.py
# runs it from these alone).
CODE_FILES = (
    "core/__init__.py",
    "core/api_key.py",
    "core/cli_inputs.py",
    "core/exits.py",
    "core/job_pods.py",
    "core/problems.py",
    "core/regions.py",
    "hyperpod_dpd/__init__.py",
    "hyperpod_dpd/shared/__init__.py",
    "hyperpod_dpd/shared/children.py",
    "hyperpod_dpd/shared/venvs.py",
    "hyperpod_dpd/benchmark/__init__.py",
    "hyperpod_dpd/benchmark/in_cluster.py",
    "hyperpod_dpd/benchmark/loadgen.py",
    "hyperpod_dpd/benchmark/results.py",
    "hyperpod_dpd/benchmark/run.py",
    "hyperpod_dpd/benchmark/scenario.py",
    "requirements-loadtest.txt",
    "requirements-job-benchmark.txt",
)
# A shipped path whose text comes from another file: aiperf's venv is built from the hash-pinned
# lock of requirements-loadtest.txt's versions (scripts/lock_job_requirements.py writes it).
SHIPPED_FROM = {"requirements-loadtest.txt": "requirements-job-loadtest.txt"}
BOTO3_REQUIREMENTS = "requirements-job-benchmark.txt"  # core/versions.py JOB_BOTO3, hashed
# The pod runs as a non-root user with no privileges: what it keeps (the program, boto3, aiperf's
# venv, the results) goes to its scratch volume (aiperf's own IPC files go to the image's /tmp).
CODE_DIR, SCRATCH_DIR = "/code", "/scratch"
APP_DIR, HOME_DIR = f"{SCRATCH_DIR}/app", f"{SCRATCH_DIR}/home"
CONTAINER = "benchmark"
UPLOAD_GRACE_SECONDS = 120
KEEP_SECONDS = 7 * 24 * 3600  # ttlSecondsAfterFinished: the Job and its pod's log, for a week


def new_run_id(now: float | None = None) -> str:
    """A sortable, unique run id: UTC time plus 4 random hex digits (20261202-031500-a1b2)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(now))
    return f"{stamp}-{secrets.token_hex(2)}"


def job_name(run_id: str) -> str:
    return f"benchmark-{run_id}"


def code_files() -> dict[str, str]:
    """Path (relative to the checkout) -> file text: what the ConfigMap ships."""
    return {path: (ROOT / SHIPPED_FROM.get(path, path)).read_text() for path in CODE_FILES}


def config_key(path: str) -> str:
    """ConfigMap keys allow [-._a-zA-Z0-9] only: 'hyperpod_dpd/shared/venvs.py' -> 'hyperpod_dpd.shared.venvs.py'."""
    return path.replace("/", ".")


@dataclass(frozen=True)
class ClusterRun:
    run_id: str
    namespace: str  # the endpoint's (where the service account is)
    service_account: str
    region: str
    bucket: str
    tokenizer_prefix: str
    tokenizer_files: tuple[str, ...]
    results_prefix: str  # benchmarks/<run id>
    target: str  # the endpoint's in-cluster URL
    workload: list[str]  # the workload flags, as the user gave them
    endpoint: dict[str, Any] | None  # the stack's endpoint facts, recorded in results.json
    timeout_seconds: int  # activeDeadlineSeconds: the run's limit, venv build included
    image: str = JOB_PYTHON_IMAGE  # the stack's hyperpod-dpd:jobs.image
    pip_index_url: str | None = None  # the stack's hyperpod-dpd:jobs.pipIndexUrl

    @property
    def name(self) -> str:
        return job_name(self.run_id)


def program_argv(run: ClusterRun) -> list[str]:
    argv = [
        "python", "-m", "hyperpod_dpd.benchmark.in_cluster",
        "--target", run.target, "--bucket", run.bucket,
        "--tokenizer-prefix", run.tokenizer_prefix,
        *(x for f in run.tokenizer_files for x in ("--tokenizer-file", f)),
        "--results-prefix", run.results_prefix, "--out", f"{SCRATCH_DIR}/results",
    ]  # fmt: skip
    if run.endpoint is not None:
        argv += ["--endpoint", json.dumps(run.endpoint, sort_keys=True)]
    return [*argv, *run.workload]


def script(run: ClusterRun) -> str:
    """The container's shell command: boto3, pinned by hash (into the user's site-packages
    under $HOME), the shipped files copied to APP_DIR (the volume's entries are symlinks into its
    data directory: -L copies the files), then the run."""
    return (
        f"{pip_install_user(f'{CODE_DIR}/{BOTO3_REQUIREMENTS}')} && mkdir -p {APP_DIR}"
        f" && cp -RL {CODE_DIR}/* {APP_DIR}/ && cd {APP_DIR} && exec {shlex.join(program_argv(run))}"
    )


def labels(run: ClusterRun) -> dict[str, str]:
    return {BENCHMARK_LABEL: run.run_id}


def config_map(run: ClusterRun, files: dict[str, str]) -> dict[str, Any]:
    """The code; `owner` (the Job's uid) makes it go when the Job goes."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"{run.name}-code", "namespace": run.namespace, "labels": labels(run)},
        "data": {config_key(path): text for path, text in files.items()},
    }


def owned_by(manifest: dict[str, Any], job: dict[str, Any]) -> dict[str, Any]:
    """`manifest` with an owner reference to the created `job` (the API server's answer)."""
    owner = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "name": job["metadata"]["name"],
        "uid": job["metadata"]["uid"],
    }
    return {**manifest, "metadata": {**manifest["metadata"], "ownerReferences": [owner]}}


def job(run: ClusterRun, files: dict[str, str]) -> dict[str, Any]:
    items = [{"key": config_key(path), "path": path} for path in files]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": run.name, "namespace": run.namespace, "labels": labels(run)},
        "spec": {
            "backoffLimit": 0,  # never retried: a second attempt would send the load again
            "activeDeadlineSeconds": run.timeout_seconds,
            "ttlSecondsAfterFinished": KEEP_SECONDS,
            "template": {
                "metadata": {"labels": labels(run)},
                "spec": {
                    # On the deadline the program uploads what it has (in_cluster.Terminated).
                    "terminationGracePeriodSeconds": UPLOAD_GRACE_SECONDS,
                    "serviceAccountName": run.service_account,
                    # aiperf and the upload call the endpoint and S3, never the Kubernetes API.
                    **no_api_token(),
                    "restartPolicy": "Never",
                    "securityContext": pod_security_context(),
                    # The load generator must not compete with the GPUs' pods it measures.
                    "nodeSelector": role_node_selector("system"),
                    "containers": [
                        {
                            "name": CONTAINER,
                            "image": run.image,
                            "command": ["/bin/sh", "-c", script(run)],
                            # Not a read-only root: aiperf's IPC files go to the image's /tmp.
                            "securityContext": container_security_context(),
                            "env": [
                                *(
                                    {"name": k, "value": v}
                                    for k, v in region_environment(run.region).items()
                                ),
                                {"name": "HOME", "value": HOME_DIR},
                                {"name": "PYTHONUNBUFFERED", "value": "1"},  # progress now
                                {"name": "HF_HUB_DISABLE_TELEMETRY", "value": "1"},
                                *index_environment(run.pip_index_url),
                                # The traffic split's API key, where the stack keeps it for
                                # in-cluster clients (specs/traffic/keys.py); none without a split.
                                {
                                    "name": api_key.ENV,
                                    "valueFrom": {
                                        "secretKeyRef": {
                                            "name": api_key.SECRET_NAME,
                                            "key": api_key.SECRET_KEY,
                                            "optional": True,
                                        }
                                    },
                                },
                            ],
                            # aiperf's workers: about one core busy at low concurrency, a few
                            # at 32 streams (`benchmark run` checks a system node holds it).
                            "resources": {
                                "requests": {
                                    "cpu": str(JOB_CPU_REQUEST),
                                    "memory": f"{JOB_MEMORY_REQUEST_GIB}Gi",
                                    "ephemeral-storage": "10Gi",
                                },
                                "limits": {
                                    "memory": f"{JOB_MEMORY_LIMIT_GIB}Gi",
                                    "ephemeral-storage": "20Gi",
                                },
                            },
                            "volumeMounts": [
                                {"name": "code", "mountPath": CODE_DIR, "readOnly": True},
                                {"name": "scratch", "mountPath": SCRATCH_DIR},
                            ],
                        }
                    ],
                    "volumes": [
                        {"name": "code", "configMap": {"name": f"{run.name}-code", "items": items}},
                        # aiperf's venv (~1.5 GB), the tokenizer and the results.
                        {"name": "scratch", "emptyDir": {"sizeLimit": "8Gi"}},
                    ],
                },
            },
        },
    }
