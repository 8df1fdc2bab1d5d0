"""Pod Security Admission labels for the namespaces the stack creates.

Each namespace enforces the strictest Pod Security Standard its pods meet, and warns and audits
at the next one up (or the same, at `restricted`), with `enforce-version` pinned to the
cluster's Kubernetes version so that an upgrade does not tighten a level under running pods:
https://kubernetes.io/docs/concepts/security/pod-security-admission/#pod-security-admission-labels-for-namespaces
https://kubernetes.io/docs/tasks/configure-pod-container/enforce-standards-namespace-labels/

- The staging and benchmark namespaces: `restricted`. Their only pods are the staging Job's
  (specs/staging.py) and the benchmark runs' (hyperpod_dpd/benchmark/job.py), which run as
  non-root with no privilege escalation, every capability dropped, the RuntimeDefault seccomp
  profile and only configMap, emptyDir and secret volumes (core/job_pods.py;
  https://kubernetes.io/docs/concepts/security/pod-security-standards/#restricted).
- An endpoint's namespace: `privileged` enforced, `baseline` warned and audited. Its pods are the
  HyperPod Inference Operator's, whose security context the InferenceEndpointConfig does not set
  (specs/schema/: no field for it); EFA workers lock memory for RDMA registration (IPC_LOCK, a
  capability outside `baseline`'s list: "Adding additional capabilities beyond those listed
  below must be disallowed", pod-security-standards/#baseline), so enforcing a stricter level
  could make the API server refuse the operator's worker pods after a green plan. The audit
  annotations and the warnings name what a stricter level would refuse. What `privileged`
  leaves open there, an admission policy closes: `baseline` plus IPC_LOCK, and no pod the
  operator did not make (specs/isolation/admission.py).
"""

from __future__ import annotations

from typing import Literal

from core.vocabulary import NAMESPACE_TYPE
from specs.base import Desired

Level = Literal["privileged", "baseline", "restricted"]
PREFIX = "pod-security.kubernetes.io"
_STRICTER: dict[str, Level] = {
    "privileged": "baseline",
    "baseline": "restricted",
    "restricted": "restricted",
}


def pod_security_labels(enforce: Level, kubernetes_version: str) -> dict[str, str]:
    """The namespace labels that enforce `enforce` (as of `kubernetes_version`, "1.33") and warn
    and audit at the next stricter level (at `latest`: what a future level would refuse)."""
    watch = _STRICTER[enforce]
    return {
        f"{PREFIX}/enforce": enforce,
        f"{PREFIX}/enforce-version": f"v{kubernetes_version}",
        f"{PREFIX}/warn": watch,
        f"{PREFIX}/warn-version": "latest",
        f"{PREFIX}/audit": watch,
        f"{PREFIX}/audit-version": "latest",
    }


def namespace_desired(
    name: str, parents: tuple[str, ...], namespace: str, enforce: Level, kubernetes_version: str
) -> Desired:
    """The Namespace `namespace` (resource `name`) enforcing Pod Security level `enforce`."""
    return Desired(
        NAMESPACE_TYPE,
        name,
        parents,
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {
                "name": namespace,
                "labels": pod_security_labels(enforce, kubernetes_version),
            },
        },
    )
