"""Pods as the inference operator makes them from a rendered InferenceEndpointConfig, and pods
as others would make them: what the admission policies are judged against.

The operator's worker pod, as the AWS DPD guide shows it
(https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-model-deployment-dpd.html,
"Verifying"): `prefill-<name>-...` / `decode-<name>-...` pods of 3 containers (the vLLM worker,
an Nginx reverse proxy, an OpenTelemetry collector), labelled
`inference.sagemaker.aws.amazon.com/dpd-role=prefill|decode`, the worker container named
`<role>-<name>`; the endpoint's pods carry `app=<name>` (core/vocabulary.py ENDPOINT_POD_LABEL).
The worker runs the IEC's image, args (the worker's, then the role's), environment, resources
(the role's) and volumes, with the model mounted where modelVolumeMount says (an S3 source
through the Mountpoint CSI driver's volume), and locks memory for EFA (IPC_LOCK,
specs/isolation/pod_security.py). With the weights cache the pods mount their cache directory
under the cache's host path (AWS sagemaker-hyperpod-model-deployment-model-caching). The pod is
owned by its ReplicaSet (controller), which the deployment controller made from the operator's
Deployment. The sidecars' images and ports are not public; they take nothing `baseline` refuses
here (if they did, the policy would refuse them and `verify` would show no pods).
"""

from __future__ import annotations

import copy
from typing import Any

from core.vocabulary import DPD_ROLE_POD_LABEL, ENDPOINT_POD_LABEL

REPLICASET_CONTROLLER = "system:serviceaccount:kube-system:replicaset-controller"
JOB_CONTROLLER = "system:serviceaccount:kube-system:job-controller"
DAEMONSET_CONTROLLER = "system:serviceaccount:kube-system:daemon-set-controller"
DEPLOYMENT_CONTROLLER = "system:serviceaccount:kube-system:deployment-controller"
CRONJOB_CONTROLLER = "system:serviceaccount:kube-system:cronjob-controller"
# A developer with `create pods` in the namespace (an EKS access entry's user name).
USER = "arn:aws:sts::111122223333:assumed-role/MLEngineer/alice"
_ROLE_SPEC = {"prefill": "prefillSpec", "decode": "decodingSpec"}


def owner(kind: str, name: str, api_version: str = "apps/v1") -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": name,
        "uid": "6b3c1d2e-0000-4000-8000-000000000001",
        "controller": True,
        "blockOwnerDeletion": True,
    }


def worker_pod(iec: dict[str, Any], role: str) -> dict[str, Any]:
    """A pod of `iec`'s `role` (prefill, decode; "colocated" for an IEC without pdSpec)."""
    name, spec = iec["metadata"]["name"], iec["spec"]
    worker = spec["worker"]
    labels = {ENDPOINT_POD_LABEL: name, "pod-template-hash": "7d9c5b6f4"}
    args, resources = list(worker.get("args", [])), worker["resources"]
    if role in _ROLE_SPEC:
        role_spec = spec["pdSpec"][_ROLE_SPEC[role]]
        args += role_spec.get("args", [])
        resources = role_spec.get("resources", resources)
        labels[DPD_ROLE_POD_LABEL] = role
    mount = worker["modelVolumeMount"]
    volumes = [
        {"name": mount["name"], "persistentVolumeClaim": {"claimName": f"{name}-model"}},
        *copy.deepcopy((spec.get("kubernetes") or {}).get("volumes", [])),
    ]
    mounts = [{"name": mount["name"], "mountPath": mount["mountPath"], "readOnly": True}]
    mounts += [{"name": v["name"], "mountPath": "/dev/shm"} for v in volumes[1:]]
    weights = (spec.get("modelCacheConfig") or {}).get("weightsCache")
    if weights and weights.get("enabled"):
        volumes.append({"name": "weights-cache", "hostPath": {
            "path": f"{weights['hostPath']}/{name}", "type": "DirectoryOrCreate"}})  # fmt: skip
        mounts.append({"name": "weights-cache", "mountPath": "/opt/ml/cache", "readOnly": True})
    deployment = f"{role}-{name}" if role in _ROLE_SPEC else name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{deployment}-7d9c5b6f4-x2x8q",
            "labels": labels,
            "ownerReferences": [owner("ReplicaSet", f"{deployment}-7d9c5b6f4")],
        },
        "spec": {
            "containers": [
                {
                    "name": f"{role}-{name}",
                    "image": worker["image"],
                    "args": args,
                    "env": copy.deepcopy(worker.get("environmentVariables", [])),
                    "ports": [{"containerPort": worker["modelInvocationPort"]["containerPort"]}],
                    "resources": copy.deepcopy(resources),
                    "volumeMounts": mounts,
                    "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}},
                },
                {"name": "nginx", "image": "nginx:stable", "ports": [{"containerPort": 8080}]},
                {"name": "otel-collector", "image": "otel/opentelemetry-collector-contrib:0.115.0"},
            ],
            "volumes": volumes,
            "nodeSelector": copy.deepcopy(
                spec["pdSpec"][_ROLE_SPEC[role]].get("nodeSelector", {})
                if role in _ROLE_SPEC
                else {}
            ),
        },
    }


def plain_pod(name: str = "notebook", **spec: Any) -> dict[str, Any]:
    """A pod someone writes by hand: one container, nothing else unless `spec` says."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {"containers": [{"name": name, "image": "python:3.12-slim"}], **spec},
    }


def deployment(name: str, template: dict[str, Any], replicas: int = 1) -> dict[str, Any]:
    """A Deployment running `template` (a pod manifest's metadata and spec)."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": template["metadata"]["labels"]},
            "template": {"metadata": template["metadata"], "spec": template["spec"]},
        },
    }
