"""A stand-in for the Kubernetes API of `benchmark run --stack` that runs the Job for real.

When a benchmark Job and its ConfigMap both exist, `FakeCluster` does what the kubelet would:
lays the ConfigMap's `items` out as files (the volume), then runs the container's own shell
command with /code and /scratch moved under a temporary directory, `pip` a no-op (boto3 is in
this venv already) and `python` this venv's. The pod's phase and log come from that
process; the Job succeeds or fails with its exit code.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from core.vocabulary import RouterService
from hyperpod_dpd.benchmark.job import APP_DIR, CODE_DIR, SCRATCH_DIR
from hyperpod_dpd.benchmark.loadgen import VENV
from hyperpod_dpd.shared.kube import ClusterError


class FakeCluster:
    server = "https://fake-eks.example"

    def __init__(self, root: Path, env: dict[str, str], services: list[dict] | None = None):
        self.root, self.env = root, env
        # The routers the operator made for the repo stacks' endpoints (dev, canary).
        routers = [
            RouterService(n, "inference") for n in ("llama-3-3-70b", "baseline", "candidate")
        ]
        self.services = (
            services
            if services is not None
            else [{"metadata": {"name": r.name, "namespace": r.namespace}} for r in routers]
        )
        self.service_accounts = {
            ("hyperpod-dpd-benchmark", "benchmark-runner")
        }  # what `pulumi up` made
        # (namespace, name) -> data: Secrets the pod's env may name (the split's API key).
        self.secrets: dict[tuple[str, str], dict[str, str]] = {}
        self.jobs: dict[str, dict] = {}
        self.config_maps: dict[str, dict] = {}
        self.process: subprocess.Popen | None = None
        self.log = root / "pod.log"
        self.closed = False
        self.deleted: list[str] = []
        self.refuse_config_maps = False

    # The Cluster methods cluster_run calls ------------------------------------------------

    def list_services(self, namespace: str) -> list[dict[str, Any]]:
        return [s for s in self.services if s["metadata"]["namespace"] == namespace]

    def read_service_account(self, namespace: str, name: str) -> dict[str, Any]:
        if (namespace, name) not in self.service_accounts:
            raise ClusterError(f'serviceaccounts "{name}" not found', 404)
        return {"metadata": {"name": name, "namespace": namespace}}

    def create_job(self, namespace: str, body: dict[str, Any]) -> dict[str, Any]:
        created = {**body, "metadata": {**body["metadata"], "uid": str(uuid.uuid4())}}
        self.jobs[body["metadata"]["name"]] = created
        return created

    def create_config_map(self, namespace: str, body: dict[str, Any]) -> dict[str, Any]:
        if self.refuse_config_maps:
            raise ClusterError('configmaps is forbidden: exceeded quota: "configmaps"', 403)
        self.config_maps[body["metadata"]["name"]] = body
        (job,) = self.jobs.values()
        self._start_pod(job, body)
        return body

    def delete_job(self, namespace: str, name: str) -> None:
        self.jobs.pop(name, None)
        self.deleted.append(name)

    def read_job(self, namespace: str, name: str) -> dict[str, Any]:
        code = self.process.poll() if self.process else None
        status = {} if code is None else ({"succeeded": 1} if code == 0 else {"failed": 1})
        return {**self.jobs[name], "status": status}

    def list_pods(self, namespace: str, label_selector: str | None = None) -> list[dict]:
        if self.process is None:
            return []
        code = self.process.poll()
        phase = "Running" if code is None else ("Succeeded" if code == 0 else "Failed")
        return [{"metadata": {"name": "benchmark-pod"}, "status": {"phase": phase}}]

    def read_log(self, namespace: str, pod: str, container: str, **_: Any) -> str:
        return self.log.read_text() if self.log.exists() else ""

    def close(self) -> None:
        self.closed = True

    # The kubelet's part -------------------------------------------------------------------

    def _env_value(self, namespace: str, entry: dict[str, Any]) -> str | None:
        """An env entry's value as the kubelet resolves it: a literal, or a Secret's key (an
        optional one that is not there: no variable; a required one: the pod cannot start)."""
        if "value" in entry:
            return entry["value"]
        ref = entry["valueFrom"]["secretKeyRef"]
        value = self.secrets.get((namespace, ref["name"]), {}).get(ref["key"])
        if value is None and not ref.get("optional"):
            raise AssertionError(f"CreateContainerConfigError: secret {ref['name']} not found")
        return value

    def _start_pod(self, job: dict[str, Any], config_map: dict[str, Any]) -> None:
        pod = job["spec"]["template"]["spec"]
        (container,) = pod["containers"]
        (volume,) = [v for v in pod["volumes"] if "configMap" in v]
        assert volume["configMap"]["name"] == config_map["metadata"]["name"]
        code, scratch = self.root / "code", self.root / "scratch"
        app = scratch / APP_DIR.removeprefix(f"{SCRATCH_DIR}/")
        for item in volume["configMap"]["items"]:
            path = code / item["path"]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(config_map["data"][item["key"]])
        # aiperf's venv is built once per checkout (tests/hyperpod_dpd/benchmark/conftest.py).
        (app / "build").mkdir(parents=True)
        (app / "build" / "loadtest-venv").symlink_to(VENV)
        shims = self.root / "bin"
        shims.mkdir()
        (shims / "pip").write_text("#!/bin/sh\nexit 0\n")
        (shims / "python").write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
        for shim in shims.iterdir():
            shim.chmod(0o755)
        shell, flag, script = container["command"]

        def moved(text: str) -> str:
            return text.replace(CODE_DIR, str(code)).replace(SCRATCH_DIR, str(scratch))

        script = moved(script)
        namespace = job["metadata"]["namespace"]
        env = {e["name"]: v for e in container["env"] if (v := self._env_value(namespace, e))}
        env = {name: moved(value) for name, value in env.items()}
        env |= self.env | {"PATH": f"{shims}:/usr/bin:/bin"}
        with self.log.open("w") as log:
            self.process = subprocess.Popen(
                [shell, flag, script], stdout=log, stderr=subprocess.STDOUT, env=env
            )
