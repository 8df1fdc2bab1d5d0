"""The few Kubernetes reads and writes `verify` and in-cluster `benchmark run`s need, through
the official `kubernetes` client.

Objects come back as the API server's JSON (camelCase dicts, as `kubectl get -o json` shows them):
the checks are pure functions of that JSON, and no client model has to accept every field an
operator release adds. Every request carries a timeout.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import urllib3
import yaml
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException
from kubernetes.config.config_exception import ConfigException

from core.vocabulary import OPERATOR_NAMESPACE

IEC_GROUP = "inference.sagemaker.aws.amazon.com"
IEC_VERSION = "v1"
IEC_PLURAL = "inferenceendpointconfigs"
ROUTER_NAMESPACE = OPERATOR_NAMESPACE
DEFAULT_LOG_BYTES = 8 * 1024 * 1024  # cap of one log read


class KubeconfigError(Exception):
    """No usable kubeconfig (bad input: exit 2)."""


class ClusterError(Exception):
    """A request failed; `status` is the HTTP status (None: no answer)."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


def kubeconfig_path(explicit: Path | None) -> str:
    """The kubeconfig kubectl would use: --kubeconfig, else $KUBECONFIG (first that exists),
    else ~/.kube/config. Raises KubeconfigError when none exists."""
    if explicit is not None:
        if not explicit.is_file():
            raise KubeconfigError(f"kubeconfig {explicit} does not exist")
        return str(explicit)
    env = os.environ.get("KUBECONFIG", "")
    candidates = [p for p in env.split(os.pathsep) if p] or [str(Path.home() / ".kube" / "config")]
    for candidate in candidates:
        if Path(candidate).expanduser().is_file():
            return str(Path(candidate).expanduser())
    where = f"$KUBECONFIG ({env})" if env else "~/.kube/config"
    raise KubeconfigError(
        f"no kubeconfig: {where} does not exist; pass --kubeconfig or run "
        "`aws eks update-kubeconfig --name <cluster>`"
    )


class Cluster:
    def __init__(self, api: client.ApiClient, request_timeout: float):
        self.api = api
        self.core = client.CoreV1Api(api)
        self.batch = client.BatchV1Api(api)
        self.custom = client.CustomObjectsApi(api)
        self.networking = client.NetworkingV1Api(api)
        self.timeout = request_timeout

    @classmethod
    def from_kubeconfig(cls, path: str, context: str | None, request_timeout: float) -> Cluster:
        try:
            api = config.new_client_from_config(
                config_file=path, context=context, persist_config=False
            )
        except (ConfigException, OSError, ValueError, yaml.YAMLError) as exc:
            raise KubeconfigError(f"kubeconfig {path}: {exc}") from None
        except (TypeError, AttributeError, KeyError) as exc:  # a YAML file that is no kubeconfig
            raise KubeconfigError(
                f"kubeconfig {path} is not a kubeconfig ({type(exc).__name__}: {exc}); pass "
                "--kubeconfig or run `aws eks update-kubeconfig --name <cluster>`"
            ) from None
        return cls(api, request_timeout)

    @property
    def server(self) -> str:
        return str(self.api.configuration.host)

    def close(self) -> None:
        self.api.close()

    # Reads -------------------------------------------------------------------------------

    def get_iec(self, namespace: str, name: str) -> dict[str, Any]:
        return self._json(
            "get inferenceendpointconfig",
            self.custom.get_namespaced_custom_object,
            IEC_GROUP,
            IEC_VERSION,
            namespace,
            IEC_PLURAL,
            name,
        )

    def get_network_policy(self, namespace: str, name: str) -> dict[str, Any] | None:
        """The NetworkPolicy, or None when there is none of that name."""
        try:
            return self._json(
                "get networkpolicy",
                self.networking.read_namespaced_network_policy,
                name,
                namespace,
            )
        except ClusterError as exc:
            if exc.status == 404:
                return None
            raise

    def list_network_policies(self, namespace: str) -> list[dict[str, Any]]:
        found = self._json(
            "list networkpolicies", self.networking.list_namespaced_network_policy, namespace
        )
        return list(found.get("items") or [])

    def list_ingresses(self, namespace: str) -> list[dict[str, Any]]:
        found = self._json("list ingresses", self.networking.list_namespaced_ingress, namespace)
        return list(found.get("items") or [])

    def list_pods(self, namespace: str, label_selector: str | None = None) -> list[dict[str, Any]]:
        kwargs = {"label_selector": label_selector} if label_selector else {}
        pods = self._json("list pods", self.core.list_namespaced_pod, namespace, **kwargs)
        return list(pods.get("items") or [])

    def read_pod(self, namespace: str, name: str) -> dict[str, Any]:
        return self._json("get pod", self.core.read_namespaced_pod, name, namespace)

    def read_log(
        self,
        namespace: str,
        pod: str,
        container: str,
        since_seconds: int | None = None,
        limit_bytes: int = DEFAULT_LOG_BYTES,
    ) -> str:
        kwargs: dict[str, Any] = {"container": container, "limit_bytes": limit_bytes}
        if since_seconds is not None:
            kwargs["since_seconds"] = max(1, since_seconds)
        data = self._raw(
            f"read log of {pod}/{container}",
            self.core.read_namespaced_pod_log,
            pod,
            namespace,
            **kwargs,
        )
        return data.decode("utf-8", errors="replace")

    # Writes (the one-shot prompt pod) ----------------------------------------------------

    def create_pod(self, namespace: str, body: dict[str, Any]) -> dict[str, Any]:
        return self._json("create pod", self.core.create_namespaced_pod, namespace, body)

    def delete_pod(self, namespace: str, name: str) -> None:
        try:
            self._raw(
                "delete pod",
                self.core.delete_namespaced_pod,
                name,
                namespace,
                grace_period_seconds=0,
            )
        except ClusterError as exc:
            if exc.status != 404:
                raise

    # Reads and writes of a benchmark run (a Job and its code's ConfigMap) ------------------

    def list_services(self, namespace: str) -> list[dict[str, Any]]:
        services = self._json("list services", self.core.list_namespaced_service, namespace)
        return list(services.get("items") or [])

    def read_service_account(self, namespace: str, name: str) -> dict[str, Any]:
        return self._json(
            "get serviceaccount", self.core.read_namespaced_service_account, name, namespace
        )

    def create_job(self, namespace: str, body: dict[str, Any]) -> dict[str, Any]:
        return self._json("create job", self.batch.create_namespaced_job, namespace, body)

    def delete_job(self, namespace: str, name: str) -> None:
        """Delete the Job and, in the background, its pods and owned objects."""
        try:
            self._raw(
                "delete job", self.batch.delete_namespaced_job, name, namespace,
                propagation_policy="Background",
            )  # fmt: skip
        except ClusterError as exc:
            if exc.status != 404:
                raise

    def read_job(self, namespace: str, name: str) -> dict[str, Any]:
        return self._json("get job", self.batch.read_namespaced_job, name, namespace)

    def create_config_map(self, namespace: str, body: dict[str, Any]) -> dict[str, Any]:
        return self._json(
            "create configmap", self.core.create_namespaced_config_map, namespace, body
        )

    # -------------------------------------------------------------------------------------

    def _json(self, what: str, call: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        data = self._raw(what, call, *args, **kwargs)
        try:
            value = json.loads(data)
        except ValueError:
            raise ClusterError(f"{what}: the API server answered with non-JSON") from None
        if not isinstance(value, dict):
            raise ClusterError(f"{what}: the API server answered with {type(value).__name__}")
        return value

    def _raw(self, what: str, call: Any, *args: Any, **kwargs: Any) -> bytes:
        try:
            response = call(*args, _preload_content=False, _request_timeout=self.timeout, **kwargs)
            try:
                return response.read()
            finally:
                response.release_conn()
        except ApiException as exc:
            raise ClusterError(f"{what}: {_api_message(exc)}", exc.status) from None
        except urllib3.exceptions.HTTPError as exc:
            raise ClusterError(f"{what}: no answer from {self.server}: {exc}") from None


def _api_message(exc: ApiException) -> str:
    """The Status message the API server sent (`pods "x" is forbidden: ...`), else the reason."""
    try:
        status = json.loads(exc.body or "")
        if isinstance(status, dict) and status.get("message"):
            return f"HTTP {exc.status}: {status['message']}"
    except ValueError:
        pass
    return f"HTTP {exc.status}: {exc.reason}"
