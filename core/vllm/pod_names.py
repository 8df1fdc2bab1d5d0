"""The names of an endpoint's worker pods, and a pattern that matches one pool's pods only.

The operator runs each pool as a Deployment: `prefill-<name>` and `decode-<name>` for a DPD
endpoint (AWS DPD docs, sagemaker-hyperpod-model-deployment-dpd.html, "Verifying": pods
`prefill-<deployment>-…` and `decode-<deployment>-…`, worker containers `prefill-<deployment>`
and `decode-<deployment>`; the CRD's pdSpec: "creating separate prefill and decode
Deployments"), `<name>` for a colocated one. Kubernetes names a Deployment's pods
`<deployment>-<pod-template-hash>-<suffix>` (kubernetes/kubernetes):
  - pkg/controller/deployment/sync.go, getNewReplicaSet: the ReplicaSet is named
    `<deployment>-<pod-template-hash>`;
  - pkg/controller/controller_utils.go, ComputeHash: the hash is
    rand.SafeEncodeString(fmt.Sprint(<uint32>)), 1 to 10 characters (a uint32 has at most 10
    decimal digits, each encoded as one character);
  - the ReplicaSet's pods are created with generateName `<replicaset>-`; the API server's
    names.SimpleNameGenerator (k8s.io/apiserver/pkg/storage/names/generate.go) cuts that base to
    58 characters (maxGeneratedNameLength = 63 - 5) and appends 5 random characters;
  - both the hash and the suffix use k8s.io/apimachinery/pkg/util/rand/rand.go's alphanums,
    "bcdfghjklmnpqrstvwxz2456789" (no vowels, no dash).

So `<deployment>-[alnum]{1,10}-[alnum]{5}`, matched whole (PromQL's =~ is anchored at both
ends), takes that Deployment's pods and no other endpoint's: a sibling's pods have more dashes
(`llama-small-…` for `llama`) or a Deployment name of their own. It holds while the base is not
cut: a Deployment name of at most DEPLOYMENT_NAME_MAX characters (settings check it where a
pool is selected by this pattern).
"""

from __future__ import annotations

import random
import re

from core.vocabulary import DPD_ROLES

# k8s.io/apimachinery/pkg/util/rand/rand.go: alphanums (SafeEncodeString and String(n)).
ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
HASH_MAX = 10  # fmt.Sprint of a uint32: at most 10 characters once encoded
SUFFIX = 5  # names.SimpleNameGenerator: randomLength
GENERATED_BASE_MAX = 63 - SUFFIX  # maxGeneratedNameLength
# `<deployment>-<hash>-` within GENERATED_BASE_MAX even at the longest hash.
DEPLOYMENT_NAME_MAX = GENERATED_BASE_MAX - len("-") - HASH_MAX - len("-")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def worker_deployment(name: str, pool: str) -> str:
    """The Deployment the operator runs `pool` (prefill, decode, colocated) of endpoint `name`
    as."""
    if pool in ("prefill", "decode"):
        return f"{pool}-{name}"
    if pool == "colocated":
        return name
    raise ValueError(f"not a worker pool: {pool!r}")


def pod_name(deployment: str, rng: random.Random) -> str:
    """A name Kubernetes could give a pod of `deployment`: `<deployment>-<pod-template-hash>-
    <suffix>` as the Deployment controller and the API server make it (above), drawn from
    `rng` (synthetic series and fake clusters name their pods so)."""
    digits = str(rng.randrange(2**32))
    pod_hash = "".join(ALPHANUMS[int(d) % len(ALPHANUMS)] for d in digits)
    base = f"{deployment}-{pod_hash}-"[:GENERATED_BASE_MAX]
    return base + "".join(rng.choice(ALPHANUMS) for _ in range(SUFFIX))


def endpoint_pod_label_values(name: str) -> tuple[str, ...]:
    """The values the operator's `app` label (core/vocabulary.py ENDPOINT_POD_LABEL) may take on
    endpoint `name`'s worker pods: its name, or one of its Deployments' names."""
    return (name, *(worker_deployment(name, role) for role in DPD_ROLES))


def pod_name_pattern(deployment: str) -> str:
    """An RE2 pattern (Prometheus' regex flavour, anchored whole by =~) matching the pods of
    Deployment `deployment` and nothing else."""
    if not _DNS_LABEL.match(deployment):
        raise ValueError(f"not a Deployment name (a DNS-1123 label): {deployment!r}")
    alnum = f"[{ALPHANUMS}]"
    return f"{deployment}-{alnum}{{1,{HASH_MAX}}}-{alnum}{{{SUFFIX}}}"
