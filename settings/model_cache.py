"""The operator's caches (endpoints.<key>.cache): what the operator and the nodes must offer
before `cache.weights` or `cache.image` is rendered (spec.modelCacheConfig).

- The field exists from operator 3.3 (core/versions.py MODEL_CACHE_MINIMUM_OPERATOR).
- The weights cache lives on the nodes' instance-store NVMe; "EBS-only instances are not
  supported", and "each deployment uses its own cache directory", bounded by the NVMe's size
  (https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-model-deployment-model-caching.html).
  So every cached endpoint that may run on a group counts against that group's instance store
  (EC2 DescribeInstanceTypes InstanceStorageInfo, core/aws/ec2_instances.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from core.aws.ec2_instances import INSTANCE_FACTS
from core.aws.instance_facts import InstanceFacts
from core.cold_start import checkpoint_bytes
from core.problems import ConfigProblem
from core.versions import MODEL_CACHE_MINIMUM_OPERATOR
from settings.cluster.groups import InferenceOperatorConfig, InstanceGroups
from settings.config.errors import full_key, set_fix
from settings.endpoint.entries import EndpointEntry, placement

GB = 10**9  # EC2's TotalSizeInGB is decimal


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text)[:2])


def check_model_cache(
    listed: list[EndpointEntry],
    operator: InferenceOperatorConfig,
    groups: InstanceGroups,
    facts: Mapping[str, InstanceFacts] = INSTANCE_FACTS,
) -> list[ConfigProblem]:
    """Every cache an endpoint asks for, against the operator version, the instance store of
    each group its pools may run on, and what the other cached endpoints there keep."""
    cached = [x for x in listed if x.config.cache.weights or x.config.cache.image]
    if not cached:
        return []
    if _version(operator.version) < MODEL_CACHE_MINIMUM_OPERATOR:
        key = full_key(("inferenceOperator", "version"))
        asked = [
            x.config_key("cache", name)
            for x in cached
            for name in ("weights", "image")
            if getattr(x.config.cache, name)
        ]
        return [
            ConfigProblem(
                k,
                True,
                f"false with {key} {operator.version}: spec.modelCacheConfig is in the operator's "
                "CRD from 3.3",
                f"{set_fix(k, False)}, or upgrade: {key} 3.3 with "
                f"{full_key(('inferenceOperator', 'addonVersion'))} v1.4.0-eksbuild.1",
            )
            for k in asked
        ]
    return _check_instance_store(listed, groups, facts)


def _check_instance_store(
    listed: list[EndpointEntry], groups: InstanceGroups, facts: Mapping[str, InstanceFacts]
) -> list[ConfigProblem]:
    alone = len(listed) == 1
    problems: list[ConfigProblem] = []
    kept: dict[str, list[tuple[EndpointEntry, int]]] = {}  # group -> cached endpoints on it
    for entry in listed:
        if not entry.config.cache.weights:
            continue
        key = entry.config_key("cache", "weights")
        size = checkpoint_bytes(entry.config.model)
        names = sorted({g for pool in entry.pools() for g in placement(entry, pool, groups, alone)})
        for name in names:
            kind = groups[name].instance_type
            f = facts.get(kind)
            if f is None:
                continue  # a type without EC2 data: settings/placement/gpu_groups.py refuses its GPU group
            if not (f.instance_store_gb and f.instance_store_nvme):
                problems.append(ConfigProblem(
                    key, True,
                    f"false while it may run on instance group {name} ({kind}): it has no NVMe "
                    "instance store, and the weights cache lives there (\"EBS-only instances "
                    "are not supported\", AWS model caching page)",
                    set_fix(key, False),
                ))  # fmt: skip
                break
            if size is not None:
                kept.setdefault(name, []).append((entry, size))
    for name, on_group in sorted(kept.items()):
        kind = groups[name].instance_type
        store = facts[kind].instance_store_gb * GB
        total = sum(size for _, size in on_group)
        if total <= store:
            continue
        entry, _ = on_group[-1]
        key = entry.config_key("cache", "weights")
        listing = ", ".join(f"{x.label} {size / GB:.0f} GB" for x, size in on_group)
        problems.append(ConfigProblem(
            key, True,
            f"cached weights that fit instance group {name}'s instance store ({kind}: "
            f"{facts[kind].instance_store_gb} GB NVMe); the cached endpoints that may run there "
            f"keep {total / GB:.0f} GB ({listing}; each keeps its own cache directory)",
            f"{set_fix(key, False)}, or pin the endpoints to different groups",
        ))  # fmt: skip
    return problems
